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

/// The state callers share with the actor without entering it: `cancel()`'s flag, the answer
/// to the subscription, and the promise filter. Stored inline in the mailbox (no object of its
/// own).
struct ActorGate: ~Copyable, Sendable {
    /// `cancelled` (set by `cancel()` before its signal is queued; checked by the actor before
    /// each stepper call) and `subscribed` (a subscription was accepted), in one word so that
    /// accepting a subscription and cancelling exclude each other without a lock.
    private let state = Atomic<UInt8>(0)
    private static let cancelled: UInt8 = 1
    private static let subscribed: UInt8 = 2
    /// The id of the promise the actor handed out last (set before the stepper call).
    let issuedPromise = Atomic<UInt64>(StepStateMachine.noPromiseID)
    /// The id of the last promise that was queued; a promise is queued at most once.
    private let queuedPromise = Atomic<UInt64>(StepStateMachine.noPromiseID)
    /// The actor has asked upstream for an input that has not arrived: raised just before each
    /// `request(.max(1))`, lowered by the input that answers it (``takeInput()``).
    private let awaitingInput = Atomic<Bool>(false)

    init() {}

    /// Whether `cancel()` has raised the flag.
    var isCancelled: Bool { state.load(ordering: .sequentiallyConsistent) & Self.cancelled != 0 }

    /// Raises the cancel flag; true for the first call only, so that only one cancel signal is
    /// queued and callers cannot flood the mailbox. Never waits.
    func requestCancel() -> Bool {
        state.bitwiseOr(Self.cancelled, ordering: .sequentiallyConsistent).oldValue & Self.cancelled == 0
    }

    /// Answers a subscription on the subscribing thread, as the synchronous designs do: the
    /// first one, if `cancel()` has not been called, is queued for the actor with `post` and
    /// then asked for `.max(1)` (rule D1); any other is cancelled (RS 2.5, C3). A subscription
    /// accepted before `cancel()` was asked for demand before `cancel()` could return on this
    /// thread, and one that arrives after it is cancelled (C7). Queued before the request, so
    /// that inputs upstream sends from inside `request` follow it in the mailbox. No lock is
    /// held across either call-out (rule R4): a `request` that waits for `cancel()` on another
    /// thread does not stall it.
    func answer(_ subscription: any Subscription, post: (MailboxSignal) -> Bool) {
        let accepted = state.compareExchange(
            expected: 0, desired: Self.subscribed, ordering: .sequentiallyConsistent
        ).exchanged
        // A post fails only if the machine died (a cancel() that came between) and the mailbox closed.
        guard accepted, post(.subscription(subscription)) else {
            subscription.cancel()
            return
        }
        request(.max(1), from: subscription)
    }

    /// Asks `subscription` for `demand` (the actor's only demand is `.max(1)`), raising the flag
    /// that lets the input in first.
    func request(_ demand: Subscribers.Demand, from subscription: any Subscription) {
        expectInput()
        subscription.request(demand)
    }

    /// Raises the flag that lets the next input in; called just before each request.
    func expectInput() {
        awaitingInput.store(true, ordering: .releasing)
    }

    /// Whether an input may enter the mailbox: the first one after a request only. Any other
    /// (an upstream that ignores demand) is dropped at once, on the calling thread, as every
    /// design drops it (S1): a flood costs no memory and never reaches the actor.
    func takeInput() -> Bool {
        awaitingInput.exchange(false, ordering: .acquiring)
    }

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
///
/// An input is handled in two steps around the stepper call: ``beginInput(gate:target:)``, then
/// the signals that arrived during the call (a promise fulfilled inside it, a re-entrant
/// completion, a `cancel()`), handled with ``handle(_:gate:)`` while the machine is still
/// stepping, as a synchronous design sees them (rules D3, C6), then ``endInput(gate:)``.
struct ActorMachine {
    private var machine: StepStateMachine

    init(stepper: AnyStepperBox) {
        machine = StepStateMachine(stepper: stepper)
    }

    /// Whether the machine is dead: the mailbox can be closed.
    var isDead: Bool { machine.isDead }

    /// Handles one signal other than an input, in mailbox order.
    mutating func handle(_ signal: consuming MailboxSignal, gate: borrowing ActorGate) {
        switch consume signal {
        case .subscription(let subscription):
            // Already asked for demand on the subscribing thread (ActorGate.answer).
            if case .cancel(let second) = machine.receiveSubscription(subscription) { second.cancel() }
            _ = cancelIfRequested(gate)
        case .input:
            assertionFailure("an input is handled with beginInput and endInput")
        case .completion(let ending):
            if gate.isCancelled {
                // cancel() came before the actor handled this completion: the stepper asked to
                // stop, so it gets no completion (C4), and upstream, which has completed, gets
                // no cancel (C6).
                _ = machine.receiveCompletionAfterCancel()
                return
            }
            machine.receiveCompletion(ending).perform(ending)
        case .promise(let id, let request):
            handlePromise(id: id, request: request, gate: gate)
        case .cancel:
            _ = cancelIfRequested(gate)
        }
    }

    /// Starts handling an input: if the machine accepts it, returns the stepper box and the
    /// promise, and the caller must hand the input's value to the stepper, handle the signals
    /// that arrived during the call, then call ``endInput(gate:)``. Returns nil if the input is
    /// dropped (cancelled, stepping, or no demand outstanding); the caller drops the value.
    @inline(__always)  // per element: into the drain, with endInput
    mutating func beginInput(gate: borrowing ActorGate, target: any StepPromiseTarget) -> (AnyObject, StepPromise)? {
        guard !cancelIfRequested(gate) else { return nil }
        guard case .callStepper(let stepper, let id) = machine.receiveInput() else { return nil }
        gate.issuedPromise.store(id, ordering: .releasing)
        return (stepper, StepPromise(target: target, id: id))
    }

    /// Ends an input once the signals that arrived during its stepper call are handled: asks
    /// upstream for the demand a `.more` gave, or delivers a re-entrant completion (C6). A
    /// cancel() whose flag is up goes first, so that no stepper call follows its return (C4).
    @inline(__always)
    mutating func endInput(gate: borrowing ActorGate) {
        guard !cancelIfRequested(gate) else { return }
        // Switched on as returned, not through `perform()`: that copied the action (its enum
        // and payload through value witnesses) on every element.
        switch machine.stepperReturned() {
        case .demand(let demand):
            guard demand != .none, machine.isSubscribedAndIdle else { return }
            gate.expectInput()
            machine.requestFromSubscription(demand)
        case .deliverCompletion(let ending, let released):
            AnyStepperBox.erased(released.stepper).complete(ending)
        }
    }

    /// Handles a promise's call (the first call of the current promise: ``ActorGate`` filters).
    mutating func handlePromise(id: StepStateMachine.PromiseID, request: StepRequest, gate: borrowing ActorGate) {
        // A cancel() whose flag is up goes first, so no request is decided after it; one decided
        // just before may still reach upstream after cancel() returns, as in every design (C7).
        guard !cancelIfRequested(gate) else { return }
        switch machine.completePromise(id: id, request: request) {
        case .none, .release: break
        case .request(let subscription): gate.request(.max(1), from: subscription)
        case .cancel(let released): released.subscription.cancel()
        }
    }

    /// Applies a pending `cancel()`: returns true if the machine is (now) cancelled.
    private mutating func cancelIfRequested(_ gate: borrowing ActorGate) -> Bool {
        guard gate.isCancelled else { return false }
        machine.cancel().perform()
        return true
    }
}
