import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The `actor` design: a ``StepActor`` owns the state machine (``ActorMachine``); every signal
/// reaches it through one order-preserving mailbox, a ring buffer of recycled slots. The actor's
/// executor is the mailbox's drain (``DrainExecutor``): a signal that finds no drain running
/// drains the mailbox itself, on its own thread, until it is empty; a signal that finds one
/// running is queued for it. So the stepper runs on the draining thread: the one that signalled
/// an idle actor (the upstream's, for an input; the fulfiller's, for a cross-thread `.more`).
/// It also steps what other threads queue while it drains, up to a fair share
/// (``StepMailbox/drainShare``, 16 signals): past it, with more queued, it gives its caller back
/// and a Dispatch worker goes on draining, so a `receive(_:)` returns after a bounded amount of
/// work however many threads feed the stream. An idle actor costs no hop, no wake-up and no
/// pool thread, and a stepper that blocks holds the thread that drains: no number of blocked
/// steppers stalls the others (rule R4).
/// Nothing is allocated per signal.
///
/// `receive(_:)` returns `.none`; demand after a `.more` goes upstream from the actor (rules
/// D3/D4 hold in their asynchronous form: exactly one `request(.max(1))` per `.more`, soon
/// after). An input the actor did not ask for (an upstream that ignores demand) is dropped at
/// once, on the caller's thread, by ``ActorGate/takeInput()`` (S1): a flood is never queued.
/// The subscription is answered on the subscribing thread (``ActorGate/answer(_:post:)``).
/// `cancel()` raises a flag the actor checks right before every stepper call (rule C4): once
/// `cancel()` returns the stepper is called at most once more (a call already begun).
/// A promise keeps the mailbox, and so the actor, alive: kept by the stepper, it still acts
/// after the caller let go of the subscriber, as in the other designs.
///
/// Why a lock and not a lock-free queue: the ring's lock is held for a push or a pop of one
/// slot and never across a call-out, and only signals that find a drain running on another
/// thread take it: the draining thread's own signals (a `.more` inside the stepper, the input upstream
/// sends from inside the actor's `request`) go to a queue only it touches. A lock-free
/// multi-producer queue would need node recycling that is safe against ABA; the ring needs none
/// and allocates only when it grows past the most signals ever queued at once (an input, a
/// promise and the rare signals: a handful).
///
/// Cost per element (synchronous `.more`, upstream sending each input from outside): the input
/// takes the idle mailbox's drain with one compare-exchange and goes straight to the stepper
/// (not queued); the `.more` is pushed to and popped from the drain's own queue, while the
/// machine still steps, so it becomes the demand the actor requests; one atomic exchange ends
/// the drain. No lock: the ring's lock is only for queuing behind a drain that runs. With
/// a `.more` from another thread, that thread takes the drain instead. No allocation and no
/// generic-metadata look-up (the queues hold trivial, non-generic slots; the input values sit in
/// typed buffers beside them). sync-step costs about twice `atomic`'s time: the rest is the
/// mailbox's bookkeeping and the promise's existential target (see the README's profile).
@usableFromInline
final class ActorSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, AsynchronousDelivery,
    @unchecked Sendable  // only `mailbox` (thread-safe) is touched from outside the actor.
{
    @usableFromInline let mailbox: StepMailbox<Input, Failure>

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        mailbox = StepMailbox(stepper: StepperBox(stepper))
    }

    @usableFromInline
    func receive(subscription: any Subscription) {
        mailbox.gate.answer(subscription) { mailbox.post($0) }
    }

    @usableFromInline
    func receive(_ input: Input) -> Subscribers.Demand {
        if mailbox.gate.takeInput() { mailbox.post(input: input) }  // else dropped (no demand: S1)
        return .none
    }

    @usableFromInline func receive(completion: Subscribers.Completion<Failure>) {
        mailbox.post(.completion(.init(completion)))
    }

    @usableFromInline
    func cancel() {
        if mailbox.gate.requestCancel() { mailbox.post(.cancel) }
    }

    @usableFromInline func waitUntilIdle() { mailbox.waitUntilIdle() }

    @usableFromInline var mailboxDescription: String { mailbox.description }
}

extension SteppingDesign {
    /// An actor owns the state machine; signals reach it through one ordered mailbox (a ring of
    /// recycled slots, drained until it is empty by the thread whose signal found it idle: the
    /// actor's executor) and demand goes upstream from the actor (`receive(_:)` returns `.none`).
    /// The stepper runs on the draining thread: the one whose signal found the actor idle, which
    /// also steps up to 16 signals other threads queue while it drains, then gives its caller
    /// back and lets a Dispatch worker drain the rest. No allocation per element and no hop while
    /// the actor is idle: a stepper that blocks holds the thread that drains.
    @inlinable public static var actor: SteppingDesign { SteppingDesign(id: .actor) }

    /// Its counts do not follow the schedule: the drain runs on the thread that signals an idle
    /// mailbox, so an event driven from one thread is handled on it (two profiles of one build
    /// agree).
    static let actorDescription = Description(
        name: "actor", traits: Traits(delivery: .onOwnExecutor).measured(countsFollowTheSchedule: false))
}
