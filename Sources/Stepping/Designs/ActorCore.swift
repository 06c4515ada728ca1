import Foundation
@preconcurrency import OpenCombine
import Synchronization

// What the two actor designs (`actor`, `actor-stream`) share: the signals their mailboxes
// carry, the flags their callers set outside the actor, and how the actor handles one signal.
// They differ only in the mailbox between the callers and the actor.
//
// Nothing here is generic: the designs are reached through OpenCombine's unspecialised
// `AnySubscriber`, where every use of a type such as `Signal<Input, Failure>` would look up its
// metadata at run time (a few hundred instructions each, per element). Only the input's value
// is typed, and it never leaves the design's own generic code.

/// One signal as a mailbox carries it. An input's value travels beside it, typed, in the
/// design's own storage.
enum MailboxSignal {
    case subscription(any Subscription)
    case input
    case completion(StepStateMachine.Ending)
    case promise(StepStateMachine.PromiseID, StepRequest)
    case cancel
}

/// The state callers share with the actor without entering it: `cancel()`'s flag and the
/// promise filter. Stored inline in the mailbox (no object of its own).
struct ActorGate: ~Copyable, Sendable {
    /// Set by `cancel()` before its signal is queued; checked by the actor before each stepper call.
    let cancelled = Atomic<Bool>(false)
    /// The id of the promise the actor handed out last (set before the stepper call).
    let issuedPromise = Atomic<UInt64>(StepStateMachine.noPromiseID)
    /// The id of the last promise that was queued; a promise is queued at most once.
    private let queuedPromise = Atomic<UInt64>(StepStateMachine.noPromiseID)

    /// Held by `cancel()` while it raises the flag and by the actor while it answers the
    /// subscription (cancels it, or asks for the first input), so that once `cancel()` has
    /// returned that answer is a cancel (rule C7): without it, the actor could read the flag,
    /// `cancel()` return on another thread, and the first request land after it. Recursive:
    /// upstream may call `cancel()` from inside that request, on the actor's thread. Taken once
    /// per subscription and per `cancel()`, never per element.
    private let subscriptionAnswer = NSRecursiveLock()

    init() {}

    /// Raises the cancel flag; true for the first call only, so that only one cancel signal is
    /// queued and callers cannot flood the mailbox. Waits for an answer to the subscription
    /// that is under way.
    func requestCancel() -> Bool {
        subscriptionAnswer.lock()
        defer { subscriptionAnswer.unlock() }
        return !cancelled.exchange(true, ordering: .sequentiallyConsistent)
    }

    func beginSubscriptionAnswer() { subscriptionAnswer.lock() }
    func endSubscriptionAnswer() { subscriptionAnswer.unlock() }

    /// Whether a promise call must be queued: the first call of the current promise only. Stale
    /// and duplicate calls, which the machine would ignore anyway (S2, S3), are dropped here, so
    /// that a thread calling a promise in a loop cannot flood the mailbox and starve the real
    /// signals behind it.
    func admitsPromise(id: StepStateMachine.PromiseID) -> Bool {
        id == issuedPromise.load(ordering: .acquiring)
            && queuedPromise.exchange(id, ordering: .acquiringAndReleasing) != id
    }
}

/// The actor's state: the ``StepStateMachine``, and how one signal moves it.
struct ActorMachine {
    private var machine: StepStateMachine

    init(stepper: AnyStepperBox) {
        machine = StepStateMachine(stepper: stepper)
    }

    /// Whether the machine is dead: the mailbox can be closed.
    var isDead: Bool { machine.isDead }

    /// Handles one signal, in mailbox order. For an input, see ``handleInput(gate:target:deliver:)``.
    @discardableResult
    mutating func handle(
        _ signal: consuming MailboxSignal, gate: borrowing ActorGate, target: any StepPromiseTarget,
        deliver: (AnyObject, StepPromise) -> Void
    ) -> Bool {
        switch consume signal {
        case .subscription(let subscription):
            // After cancel() returned, the subscription is cancelled, not asked for demand (rule
            // C7): the answer and cancel() exclude each other (see ActorGate).
            gate.beginSubscriptionAnswer()
            defer { gate.endSubscriptionAnswer() }
            if cancelIfRequested(gate) {
                subscription.cancel()
                return false
            }
            switch machine.receiveSubscription(subscription) {
            case .requestFirst(let s): s.request(.max(1))
            case .cancel(let s): s.cancel()
            }
        case .input:
            return handleInput(gate: gate, target: target, deliver: deliver)
        case .completion(let ending):
            guard !cancelIfRequested(gate) else { return false }
            machine.receiveCompletion(ending).perform(ending)
        case .promise(let id, let request):
            handlePromise(id: id, request: request, gate: gate)
        case .cancel:
            _ = cancelIfRequested(gate)
        }
        return false
    }

    /// Handles an input. If the machine accepts it, `deliver` is called with the stepper box and
    /// the promise, and must hand the input's value to the stepper; if it drops it (cancelled, or
    /// no demand outstanding) `deliver` is not called and the caller drops the value. Returns
    /// whether `deliver` was called.
    mutating func handleInput(
        gate: borrowing ActorGate, target: any StepPromiseTarget,
        deliver: (AnyObject, StepPromise) -> Void
    ) -> Bool {
        guard !cancelIfRequested(gate) else { return false }
        guard case .callStepper(let stepper, let id) = machine.receiveInput() else { return false }
        gate.issuedPromise.store(id, ordering: .releasing)
        deliver(stepper, StepPromise(target: target, id: id))
        // Promises fulfilled during the call are queued behind us, so the demand is `.none`
        // unless a cancel or a re-entrant completion changed the state.
        let demand = machine.stepperReturned().perform()
        if demand != .none, let subscription = machine.subscriptionWhileSubscribed { subscription.request(demand) }
        return true
    }

    /// Handles a promise's call (the first call of the current promise: ``ActorGate`` filters).
    mutating func handlePromise(id: StepStateMachine.PromiseID, request: StepRequest, gate: borrowing ActorGate) {
        // After cancel() returned, no request may reach upstream: apply the cancel first.
        guard !cancelIfRequested(gate) else { return }
        machine.completePromise(id: id, request: request).perform()
    }

    /// Applies a pending `cancel()`: returns true if the machine is (now) cancelled.
    private mutating func cancelIfRequested(_ gate: borrowing ActorGate) -> Bool {
        guard gate.cancelled.load(ordering: .sequentiallyConsistent) else { return false }
        machine.cancel().perform()
        return true
    }
}
