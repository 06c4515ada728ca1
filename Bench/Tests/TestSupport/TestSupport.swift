import Foundation
// Helpers shared by the test targets (SteppingTests, StepBenchKitTests) and the torture child
// process (SteppingTorture). What the code under test already has (the suite's upstream
// `CountingUpstream`, `SplitMix64`, `Unchecked`; the conformance kit's `TestError`, `Box`,
// `eventually`, probes and scripted upstreams) the tests take from there.
@_exported @_spi(StepBench) import SteppingConformance

/// A new, empty folder under the temporary directory.
public func temporaryFolder(_ prefix: String = "stepbench-tests") -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
