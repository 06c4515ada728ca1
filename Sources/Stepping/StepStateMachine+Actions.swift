@preconcurrency import OpenCombine

// Performing the state machine's actions, shared by the designs that wrap the machine in a
// lock (`locked`, `mutex`) and by `actor`. Call these after leaving the critical section: they
// call upstream and the stepper, and the references an action carries out of the machine
// (`released`) are let go when the action is, after the call-out (rule R3).

extension StepStateMachine.CompletePromiseAction {
    @inlinable @inline(__always)  // per element in every design
    func perform() {
        switch self {
        case .none, .release: break
        case .request(let subscription): subscription.request(.max(1))
        case .cancel(let released): released.subscription.cancel()
        }
    }
}

extension StepStateMachine.CancelAction {
    @inlinable
    func perform() {
        if case .cancel(let released) = self { released.subscription.cancel() }
    }
}

extension StepStateMachine.StepperReturnedAction {
    /// Performs what `stepperReturned()` asked; returns the demand for `receive(_:)`.
    @inlinable @inline(__always)  // per element in every design
    func perform() -> Subscribers.Demand {
        switch self {
        case .demand(let demand):
            return demand
        case .deliverCompletion(let ending, let released):
            AnyStepperBox.from(released.stepper).complete(ending)
            return .none
        }
    }
}

extension StepStateMachine.ReceiveCompletionAction {
    /// Performs what `receiveCompletion(_:)` asked with `ending`, the completion it was given.
    @inlinable
    func perform(_ ending: StepStateMachine.Ending) {
        if case .callStepper(let released) = self { AnyStepperBox.from(released.stepper).complete(ending) }
    }
}
