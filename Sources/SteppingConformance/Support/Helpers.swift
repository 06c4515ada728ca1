import Foundation
@_spi(Measurement) import Stepping

/// The failure the tests' publishers and steppers use.
package struct TestError: Error, Equatable {
    package var code: Int
    package init(code: Int = 1) { self.code = code }
}

/// A locked box for bookkeeping shared with Sendable closures.
package final class Box<Value>: @unchecked Sendable {  // `value` behind `lock`
    private let lock = NSLock()
    private var _value: Value
    package init(_ value: Value) { _value = value }
    package var value: Value { lock.withLock { _value } }
    @discardableResult package func mutate<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&_value) } }
}

/// Waits (bounded) until `condition` holds; returns whether it did. Synchronous designs satisfy
/// conditions at once; asynchronous ones (the actors) get time to deliver.
@discardableResult
package func eventually(timeout: Double? = nil, _ condition: () -> Bool) -> Bool {
    // 5 s, shortened with the running check's stall limit (``Conformance/briefWait``).
    let deadline = Date().addingTimeInterval(timeout ?? Conformance.briefWait)
    while !condition() {
        if Date() > deadline { return false }
        usleep(100)
    }
    return true
}

/// Lets an asynchronous design finish everything it has accepted (no-op for synchronous ones),
/// so a check can then see that nothing more happened.
package func settleDesign(_ subscriber: AnyObject) {
    SteppingDesign.waitUntilIdle(subscriber)
}

extension SteppingDesign {
    /// A subscriber of this design driving `probe`, with `TestError` as failure.
    package func subscriber<Input>(_ probe: StepperProbe<Input>) -> any SteppingSubscriber<Input, TestError> {
        makeSubscriber(stepper: probe.stepper(TestError.self))
    }
}
