@_spi(Measurement) import Stepping
import TestSupport

/// The designs under test: every design, minus ``TestSwitches/excludedDesigns``.
let testedDesigns: [SteppingDesign] = {
    let excluded = TestSwitches.excludedDesigns
    return SteppingDesign.allCases.filter { !excluded.contains($0) }
}()
