import Dispatch
@preconcurrency import OpenCombine
import Stepping

// A design none of the six is, written as a library author outside the `Stepping` module would
// write it: public API only (no testable import, no SPI). A `DispatchSemaphore` guards
// `StepStateMachine`; every action is performed after the semaphore is signalled. (The DocC
// article "Writing a design" walks through this file.)

/// The stepper, kept by the machine, which releases it on completion and cancel (rule R1).
final class SemaphoreStepperBox<Input, Failure: Error>: Sendable {
    let call: @Sendable (StepEvent<Input, Failure>) -> Void
    init(_ call: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) { self.call = call }
}

public final class SemaphoreSubscriber<Input, Failure: Error>: SteppingSubscriber, StepPromiseTarget,
    @unchecked Sendable  // `machine` is only touched between gate.wait() and gate.signal()
{
    private let gate = DispatchSemaphore(value: 1)
    private var machine: StepStateMachine

    public init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        machine = StepStateMachine(stepper: SemaphoreStepperBox(stepper))
    }

    private func locked<R>(_ body: (inout StepStateMachine) -> R) -> R {
        gate.wait()
        defer { gate.signal() }
        return body(&machine)
    }

    private func box(_ object: AnyObject) -> SemaphoreStepperBox<Input, Failure> {
        unsafeDowncast(object, to: SemaphoreStepperBox<Input, Failure>.self)
    }

    public func receive(subscription: any Subscription) {
        switch locked({ $0.receiveSubscription(subscription) }) {
        case .requestFirst(let subscription): subscription.request(.max(1))
        case .cancel(let subscription): subscription.cancel()
        }
    }

    public func receive(_ input: Input) -> Subscribers.Demand {
        guard case .callStepper(let stepper, let id) = locked({ $0.receiveInput() }) else { return .none }
        box(stepper).call(.input(input, StepPromise(target: self, id: id)))
        switch locked({ $0.stepperReturned() }) {
        case .demand(let demand):
            return demand
        case .deliverCompletion(let ending, let released):
            box(released.stepper).call(.completion(ending.typed()))
            return .none
        }
    }

    public func receive(completion: Subscribers.Completion<Failure>) {
        let action = locked { $0.receiveCompletion(StepStateMachine.Ending(completion)) }
        if case .callStepper(let released) = action { box(released.stepper).call(.completion(completion)) }
    }

    public func cancel() {
        if case .cancel(let released) = locked({ $0.cancel() }) { released.subscription.cancel() }
    }

    public func completePromise(id: StepPromiseID, request: StepRequest) {
        switch locked({ $0.completePromise(id: id, request: request) }) {
        case .none, .release: break
        case .request(let subscription): subscription.request(.max(1))
        case .cancel(let released): released.subscription.cancel()
        }
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
