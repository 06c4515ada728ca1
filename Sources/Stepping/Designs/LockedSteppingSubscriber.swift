import Foundation
@preconcurrency import OpenCombine

/// The `locked` design: one `NSLock` around ``StepStateMachine``.
///
/// Each signal takes the lock once, runs one transition, releases the lock and then performs
/// the returned action. The promise is a value (this object + an id), the actions are enums:
/// no heap allocation per element. Synchronous `.more`: 2 lock acquisitions per element
/// (input, stepper returned) + 1 for the promise; cross-thread `.more`: 3.
///
/// Releasing is a call-out too (rule R3): a transition that kills the machine hands the stepper
/// and subscription back in its action, so the last references go after `unlock()`, and a
/// `deinit` of something the stepper owns may call back into this subscriber.
@usableFromInline
final class LockedSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, StepPromiseTarget,
    @unchecked Sendable  // `machine` is only touched while holding `lock`.
{
    @usableFromInline let lock = NSLock()
    /// Guarded by `lock`, which already serialises every access; the run-time exclusivity check
    /// would re-prove that on each access, with thread-local look-ups on the per-element path,
    /// so it is off.
    @exclusivity(unchecked) @usableFromInline var machine: StepStateMachine

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        machine = StepStateMachine(stepper: StepperBox(stepper))
    }

    /// Takes the lock. A counting build tries it first and counts a lock that was not free
    /// (``ContentionEvent``); otherwise this is `lock.lock()`.
    @inlinable @inline(__always)
    func acquire() {
        #if STEPBENCH_COUNTING
            if lock.try() { return }
            ContentionEvent.lockSlowPath.count()
        #endif
        lock.lock()
    }

    /// Runs `body` on the machine holding the lock. The action it returns comes out as the
    /// closure's result, a value of its own that `perform()` then consumes; bound to a local
    /// between `lock()` and `unlock()`, the action was copied whole and the copy destroyed, per
    /// element (the whole profile's `outlined init with copy of …Action`).
    @inlinable @inline(__always)
    func locked<Action>(_ body: (inout StepStateMachine) -> Action) -> Action {
        acquire()
        defer { lock.unlock() }
        return body(&machine)
    }

    @inlinable
    func receive(subscription: any Subscription) {
        acquire()
        let action = machine.receiveSubscription(subscription)
        lock.unlock()
        action.perform()
    }

    @inlinable
    func receive(_ input: Input) -> Subscribers.Demand {
        // The stepper's closure is taken while the lock is held, where the machine still holds its
        // box: copying the closure retains its context, which keeps the stepper alive through
        // the call even if the machine dies meanwhile, so the box itself needs no retain. (Not
        // through `locked { }`: a closure returned as its generic result is re-abstracted, an
        // allocation per element.)
        acquire()
        guard case .callStepper(let stepper, let id) = machine.receiveInput() else {
            lock.unlock()
            return .none
        }
        let call = StepperBox<Input, Failure>.from(consume stepper).input
        lock.unlock()
        call(input, StepPromise(target: self, id: id))
        return locked { $0.stepperReturned() }.perform()
    }

    @inlinable
    func receive(completion: Subscribers.Completion<Failure>) {
        let ending = StepStateMachine.Ending(completion)
        acquire()
        let action = machine.receiveCompletion(ending)
        lock.unlock()
        action.perform(ending)
    }

    @inlinable
    func cancel() {
        acquire()
        let action = machine.cancel()
        lock.unlock()
        action.perform()
    }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        locked { $0.completePromise(id: id, request: request) }.perform()
    }
}

extension SteppingDesign {
    /// `NSLock` around ``StepStateMachine``; value promises, enum actions, no allocation per element.
    @inlinable public static var locked: SteppingDesign { SteppingDesign(id: .locked) }

    static let lockedDescription = Description(name: "locked", traits: Traits())
}
