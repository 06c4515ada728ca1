import Foundation
@preconcurrency import OpenCombine
import TestSupport

@testable import Stepping

/// Lets an asynchronous design finish everything it has accepted (no-op for synchronous ones),
/// so a test can then check that nothing more happened.
func settleDesign(_ subscriber: AnyObject) {
    SteppingDesign.waitUntilIdle(subscriber)
}

extension SteppingDesign {
    /// A subscriber of this design driving `probe`, with `TestError` as failure.
    func subscriber<Input>(_ probe: StepperProbe<Input>) -> any SteppingSubscriber<Input, TestError> {
        makeSubscriber(stepper: probe.stepper(TestError.self))
    }
}

/// The designs under test: every design, minus ``TestSwitches/excludedDesigns``.
let testedDesigns: [SteppingDesign] = {
    let excluded = TestSwitches.excludedDesigns
    return SteppingDesign.allCases.filter { !excluded.contains($0) }
}()
