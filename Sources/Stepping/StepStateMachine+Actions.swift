@preconcurrency import OpenCombine

// Performing the state machine's actions, shared by the designs that wrap the machine in a
// lock (`locked`, `mutex`) and by `actor`. Call these after leaving the critical section: they
// call upstream and the stepper, and the references an action carries out of the machine
// (`released`) are let go when the action is, after the call-out (rule R3).

extension StepStateMachine.CompletePromiseAction {
    @inlinable
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

extension StepperBox {
    /// Performs what `stepperReturned()` asked; returns the demand for `receive(_:)`.
    @inlinable
    static func perform(_ action: StepStateMachine.StepperReturnedAction) -> Subscribers.Demand {
        switch action {
        case .demand(let demand):
            return demand
        case .deliverCompletion(let ending, let released):
            from(released.stepper).call(.completion(ending.typed()))
            return .none
        }
    }

    /// Performs what `receiveCompletion(_:)` asked, with the completion as upstream sent it.
    @inlinable
    static func perform(_ action: StepStateMachine.ReceiveCompletionAction, _ completion: Subscribers.Completion<Failure>) {
        if case .callStepper(let released) = action { from(released.stepper).call(.completion(completion)) }
    }
}
