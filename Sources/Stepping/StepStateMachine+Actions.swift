@preconcurrency import OpenCombine

// Performing the state machine's actions, shared by the designs that wrap the machine (`locked`,
// `mutex`, `actor`, and any design of your own). Call these after leaving the critical section:
// they call upstream and the stepper (through the machine's ``StepperBox``), and the references
// an action carries out of the machine (`released`) are let go when the action is, after the
// call-out (rule R3). The input's own action, `callStepper`, takes the design's promise target:
// `StepperBox<Input, Failure>.from(stepper).input(input, StepPromise(target: self, id: id))`.

extension StepStateMachine.ReceiveSubscriptionAction {
    /// Requests the first element of the subscription, or cancels one that came too late.
    @inlinable
    public func perform() {
        switch self {
        case .requestFirst(let subscription): subscription.request(.max(1))
        case .cancel(let subscription): subscription.cancel()
        }
    }
}

extension StepStateMachine.CompletePromiseAction {
    /// Requests the next element, or cancels upstream, as the promise asked. Consuming: the
    /// action is spent here, so its payload is moved out, not copied (a borrowed `switch` over
    /// this enum of existentials copied it whole and destroyed the copy, per element).
    @inlinable @inline(__always)  // per element in every design
    public consuming func perform() {
        switch self {
        case .none, .release: break
        case .request(let subscription): subscription.request(.max(1))
        case .cancel(let released): released.subscription.cancel()
        }
    }
}

extension StepStateMachine.CancelAction {
    /// Cancels upstream if the machine was subscribed.
    @inlinable
    public func perform() {
        if case .cancel(let released) = self { released.subscription.cancel() }
    }
}

extension StepStateMachine.StepperReturnedAction {
    /// Performs what `stepperReturned()` asked; returns the demand for `receive(_:)`. Consuming,
    /// as ``StepStateMachine/CompletePromiseAction/perform()``.
    @inlinable @inline(__always)  // per element in every design
    public consuming func perform() -> Subscribers.Demand {
        switch self {
        case .demand(let demand):
            return demand
        case .deliverCompletion(let ending, let released):
            AnyStepperBox.erased(released.stepper).complete(ending)
            return .none
        }
    }
}

extension StepStateMachine.ReceiveCompletionAction {
    /// Performs what `receiveCompletion(_:)` asked with `ending`, the completion it was given.
    @inlinable
    public func perform(_ ending: StepStateMachine.Ending) {
        if case .callStepper(let released) = self { AnyStepperBox.erased(released.stepper).complete(ending) }
    }
}
