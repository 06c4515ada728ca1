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

/// The designs under test: every design, minus those named in `STEPBENCH_EXCLUDE_DESIGNS`
/// (comma-separated; for local iteration only: scripts/test and CI never set it).
let testedDesigns: [SteppingDesign] = {
    let raw = ProcessInfo.processInfo.environment["STEPBENCH_EXCLUDE_DESIGNS"] ?? ""
    let names = raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    for name in names where SteppingDesign(rawValue: name) == nil {
        fatalError(
            "STEPBENCH_EXCLUDE_DESIGNS names unknown design '\(name)'; designs are \(SteppingDesign.allCases.map(\.rawValue))"
        )
    }
    return SteppingDesign.allCases.filter { !names.contains($0.rawValue) }
}()
