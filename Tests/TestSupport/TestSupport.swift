import Foundation
// Helpers shared by the test targets (SteppingTests) and the torture child
// process (SteppingTorture). What the code under test already has (the suite's upstream
// `CountingUpstream`, `SplitMix64`, `Unchecked`; the conformance kit's `TestError`, `Box`,
// `eventually`, probes and scripted upstreams) the tests take from there.
@_exported @_spi(StepBench) import SteppingConformance
