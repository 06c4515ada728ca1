@preconcurrency import OpenCombine
import Synchronization

/// The `mutex` design: `Synchronization.Mutex` (a futex word, no pthread object) around
/// ``StepStateMachine``.
///
/// Same transitions and call-outs as `locked`; only the lock differs. The machine holds a
/// non-Sendable `any Subscription`, which `Mutex.withLock`'s `inout sending` parameter would
/// reject, so each signal crosses into the lock through ``Unchecked`` (see there). Actions that
/// kill the machine carry the stepper and subscription out of the lock, so their last
/// references go after unlocking (rule R3).
/// Synchronous `.more`: 2 lock acquisitions per element + 1 for the promise; cross-thread: 3.
@usableFromInline
final class MutexSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, StepPromiseTarget,
    @unchecked Sendable  // all mutable state is inside `mutex`.
{
    @usableFromInline let mutex: Mutex<Unchecked<StepStateMachine>>

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        mutex = Mutex(Unchecked(StepStateMachine(stepper: StepperBox(stepper))))
    }

    /// `mutex.withLock(body)`. A counting build tries the lock first and counts a lock that was
    /// not free (``ContentionEvent``).
    @inlinable @inline(__always)
    func locked<R: Sendable>(_ body: (inout sending Unchecked<StepStateMachine>) -> sending R) -> R {
        #if STEPBENCH_COUNTING
            if let result = mutex.withLockIfAvailable(body) { return result }
            ContentionEvent.lockSlowPath.count()
        #endif
        return mutex.withLock(body)
    }

    @inlinable
    func receive(subscription: any Subscription) {
        let subscription = Unchecked(subscription)
        locked { Unchecked($0.value.receiveSubscription(subscription.value)) }.value.perform()
    }

    @inlinable
    func receive(_ input: Input) -> Subscribers.Demand {
        let action = locked { Unchecked($0.value.receiveInput()) }.value
        // consumed: the stepper is moved out of the action, not copied and the action destroyed
        guard case .callStepper(let stepper, let id) = consume action else { return .none }
        StepperBox<Input, Failure>.from(stepper).input(input, StepPromise(target: self, id: id))
        let returned = locked { Unchecked($0.value.stepperReturned()) }
        // The common case inline: a static call on the generic `StepperBox<Input, Failure>` would
        // look up its metadata for every element (the per-function profile shows it).
        return returned.value.perform()
    }

    @inlinable
    func receive(completion: Subscribers.Completion<Failure>) {
        let ending = Unchecked(StepStateMachine.Ending(completion))
        let action = locked { Unchecked($0.value.receiveCompletion(ending.value)) }
        action.value.perform(ending.value)
    }

    @inlinable
    func cancel() {
        locked { Unchecked($0.value.cancel()) }.value.perform()
    }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        locked { Unchecked($0.value.completePromise(id: id, request: request)) }.value.perform()
    }
}

extension SteppingDesign {
    /// `Synchronization.Mutex` around ``StepStateMachine``; otherwise as ``locked``.
    @inlinable public static var mutex: SteppingDesign { SteppingDesign(id: .mutex) }

    static let mutexDescription = Description(name: "mutex", traits: Traits())
}
