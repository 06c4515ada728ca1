import Dispatch
@preconcurrency import OpenCombine
import Stepping

// A design none of the six is, written as a library author outside the `Stepping` module would
// write it: public API only (no testable import, no SPI). A `DispatchSemaphore` guards
// `StepStateMachine`; every action is performed after the semaphore is signalled. (The DocC
// article "Writing a design" walks through this file.)

public final class SemaphoreSubscriber<Input, Failure: Error>: SteppingSubscriber, StepPromiseTarget,
    @unchecked Sendable  // `machine` is only touched between gate.wait() and gate.signal()
{
    private let gate = DispatchSemaphore(value: 1)
    private var machine: StepStateMachine

    /// The machine keeps the stepper in a `StepperBox`, and releases it on completion and cancel
    /// (rule R1).
    public init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        machine = StepStateMachine(stepper: StepperBox(stepper))
    }

    /// One transition of the machine behind the semaphore; its action is performed by the caller,
    /// after the semaphore is signalled.
    private func locked<R>(_ body: (inout StepStateMachine) -> R) -> R {
        gate.wait()
        defer { gate.signal() }
        return body(&machine)
    }

    public func receive(subscription: any Subscription) {
        locked { $0.receiveSubscription(subscription) }.perform()
    }

    public func receive(_ input: Input) -> Subscribers.Demand {
        guard case .callStepper(let stepper, let id) = locked({ $0.receiveInput() }) else { return .none }
        StepperBox<Input, Failure>.from(stepper).input(input, StepPromise(target: self, id: id))
        return locked { $0.stepperReturned() }.perform()
    }

    public func receive(completion: Subscribers.Completion<Failure>) {
        let ending = StepStateMachine.Ending(completion)
        locked { $0.receiveCompletion(ending) }.perform(ending)
    }

    public func cancel() {
        locked { $0.cancel() }.perform()
    }

    public func completePromise(id: StepPromiseID, request: StepRequest) {
        locked { $0.completePromise(id: id, request: request) }.perform()
    }
}

public struct SemaphoreFactory: SteppingSubscriberFactory {
    public init() {}

    public func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        SemaphoreSubscriber(stepper: stepper)
    }
}

extension SteppingDesign {
    /// A `DispatchSemaphore` around `StepStateMachine`: synchronous delivery, nothing allocated
    /// per element, every rule kept.
    public static let semaphore = SteppingDesign(name: "semaphore", factory: SemaphoreFactory())
}
