extension StepStateMachine {
    /// Which references each phase holds, checked in debug builds after every transition
    /// (compiled out in release): the stepper until death; the subscription while subscribed
    /// or stepping; a pending completion only while stepping; a valid promise only while
    /// subscribed or stepping, and never one not yet handed out.
    @inlinable @inline(__always)
    func checkInvariants() {
        #if DEBUG
            precondition((stepper != nil) == (phase != .dead), "StepStateMachine: stepper held in \(phase)")
            precondition(
                (subscription != nil) == (phase == .subscribed || phase == .stepping),
                "StepStateMachine: subscription held in \(phase)")
            precondition(
                pendingCompletion == nil || phase == .stepping, "StepStateMachine: completion kept in \(phase)")
            precondition(
                validPromiseID == Self.noPromiseID
                    || ((phase == .subscribed || phase == .stepping) && validPromiseID < nextPromiseID),
                "StepStateMachine: promise \(validPromiseID) valid in \(phase)")
        #endif
    }
}
