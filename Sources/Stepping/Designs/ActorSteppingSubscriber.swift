import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The `actor` design: a ``StepActor`` owns the state machine (``ActorMachine``); every signal
/// reaches it through one order-preserving mailbox, a ring buffer of recycled slots drained by
/// one long-lived task on the actor's own serial executor. The task parks only when the
/// mailbox is empty and is woken by the next signal, so a steady stream of signals allocates
/// nothing and needs no task, continuation or executor hop per signal.
///
/// `receive(_:)` returns `.none`; demand goes upstream from the actor (rules D3/D4 hold in
/// their asynchronous form: exactly one `request(.max(1))` per `.more`, soon after).
/// `cancel()` raises a flag the actor checks right before every stepper call (rule C4): once
/// `cancel()` returns the stepper is called at most once more (a call already begun).
///
/// Why a lock and not a lock-free queue: the mailbox's lock is held for a push or a pop of one
/// slot and never across a call-out, and in the synchronous case producer and consumer are the
/// same thread (upstream answers the actor's `request` on the actor), so it is uncontended. A
/// lock-free multi-producer queue would need node recycling that is safe against ABA; the ring
/// needs none and allocates only when it grows past the most signals ever queued at once.
///
/// Cost per element (synchronous `.more`): two mailbox pushes and pops (input, promise), each
/// one uncontended lock; no allocation. Cross-thread `.more` when the actor was idle: one
/// resumption of the parked task on the actor's queue (see ``QueueExecutor``).
@usableFromInline
final class ActorSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, AsynchronousDelivery,
    @unchecked Sendable  // only `mailbox` (thread-safe) is touched from outside the actor.
{
    @usableFromInline let mailbox: StepMailbox<Input, Failure>

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        mailbox = StepMailbox(stepper: StepperBox(stepper))
    }

    deinit { mailbox.close() }

    @usableFromInline
    func receive(subscription: any Subscription) {
        if !mailbox.post(.subscription(subscription)) {
            subscription.cancel()  // dead: the actor is gone; answer as the machine would (RS 2.5)
        }
    }

    @usableFromInline
    func receive(_ input: Input) -> Subscribers.Demand {
        mailbox.post(.input(input))
        return .none
    }

    @usableFromInline func receive(completion: Subscribers.Completion<Failure>) { mailbox.post(.completion(completion)) }

    @usableFromInline
    func cancel() {
        if mailbox.gate.requestCancel() { mailbox.post(.cancel) }
    }

    @usableFromInline func waitUntilIdle() { mailbox.waitUntilIdle() }

    @usableFromInline var mailboxDescription: String { mailbox.description }
}

/// The mailbox between the subscriber's callers and the actor; also the promises' target, so a
/// promise kept by the stepper does not keep the actor alive.
@usableFromInline
final class StepMailbox<Input, Failure: Error>: StepPromiseTarget,
    @unchecked Sendable  // `queue` is behind its lock; `gate` is atomic.
{
    typealias Signal = ActorSignal<Input, Failure>

    /// The signals not yet handled, in order, and the drain task's state.
    struct Queue {
        /// A ring of `capacity` slots (a power of two) starting at `head`; `count` are full.
        private var slots: ContiguousArray<Signal?> = .init(repeating: nil, count: 8)
        private var head = 0
        private(set) var count = 0
        /// The drain task, parked because the ring was empty.
        var waiter: UnsafeContinuation<Void, Never>?
        /// No more signals are accepted: the machine died or the subscriber was deinitialised.
        var closed = false
        /// The actor is handling a signal it took (for `waitUntilIdle`).
        var handling = false

        mutating func push(_ signal: Signal) {
            if count == slots.count { grow() }
            slots[(head &+ count) & (slots.count &- 1)] = signal
            count &+= 1
        }

        mutating func pop() -> Signal? {
            guard count > 0 else { return nil }
            defer {
                head = (head &+ 1) & (slots.count &- 1)
                count &-= 1
            }
            return slots[head].take()
        }

        /// Doubles the ring, keeping the order. Slots are reused, so this is the only allocation.
        private mutating func grow() {
            var larger = ContiguousArray<Signal?>(repeating: nil, count: slots.count * 2)
            for i in 0..<count { larger[i] = slots[(head &+ i) & (slots.count &- 1)].take() }
            slots = larger
            head = 0
        }
    }

    /// What the drain task finds in the mailbox.
    enum Next {
        case signal(Signal)
        /// Nothing queued: park until the next signal (``waitForSignal()``).
        case empty
        /// Closed and drained: the task ends.
        case closed
    }

    private let queue = Mutex(Unchecked(Queue()))  // Unchecked: signals hold non-Sendable values
    let gate = ActorGate()

    @usableFromInline
    init(stepper: StepperBox<Input, Failure>) {
        let actor = StepActor<Input, Failure>(stepper: stepper, mailbox: self)
        Task.detached(executorPreference: actor.executor) { await actor.run() }
    }

    /// Queues a signal and wakes the actor if it was parked. Signals from one thread keep their
    /// order; upstream's are serial. Returns false if the mailbox is closed (the signal is
    /// dropped): the caller answers as a dead machine would.
    @discardableResult
    func post(_ signal: Signal) -> Bool {
        let signal = Unchecked(signal)
        let (accepted, waiter) = queue.withLock { queue -> (Bool, UnsafeContinuation<Void, Never>?) in
            guard !queue.value.closed else { return (false, nil) }
            queue.value.push(signal.value)
            defer { queue.value.waiter = nil }
            return (true, queue.value.waiter)
        }
        waiter?.resume()  // after unlocking: the task may run at once on another thread
        return accepted
    }

    /// For the drain task: the next signal, `.empty` or `.closed`. Taking the next signal also
    /// marks the previous one handled.
    func next() -> Next {
        let next = queue.withLock { queue -> Unchecked<Next> in
            queue.value.handling = false
            if let signal = queue.value.pop() {
                queue.value.handling = true
                return Unchecked(.signal(signal))
            }
            return Unchecked(queue.value.closed ? .closed : .empty)
        }
        return next.value
    }

    /// Parks the drain task until a signal is queued or the mailbox closes (returns at once if
    /// that already happened: a signal queued between `next()` and here is not missed).
    func waitForSignal() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let ready = queue.withLock { queue -> Bool in
                if queue.value.count > 0 || queue.value.closed { return true }
                queue.value.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Accepts no more signals; the drain task handles what is queued, then ends.
    func close() {
        let waiter = queue.withLock { queue -> UnsafeContinuation<Void, Never>? in
            queue.value.closed = true
            defer { queue.value.waiter = nil }
            return queue.value.waiter
        }
        waiter?.resume()
    }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        if gate.admitsPromise(id: id) { post(.promise(id, request)) }
    }

    var description: String {
        queue.withLock { q in
            "\(q.value.count) queued, \(q.value.handling ? "handling one" : "idle"), task \(q.value.waiter == nil ? "running" : "parked")\(q.value.closed ? ", closed" : "")"
        }
    }

    func waitUntilIdle() {
        while !queue.withLock({ $0.value.count == 0 && !$0.value.handling }) {
            usleep(20)
        }
    }
}

/// Owns the state machine; handles the mailbox's signals one at a time, in order.
actor StepActor<Input, Failure: Error> {
    private var machine: ActorMachine<Input, Failure>
    private let mailbox: StepMailbox<Input, Failure>
    nonisolated let executor = QueueExecutor(label: "stepbench.actor")

    /// Runs on its own serial queue, not the cooperative pool (see ``QueueExecutor``).
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(stepper: StepperBox<Input, Failure>, mailbox: StepMailbox<Input, Failure>) {
        machine = ActorMachine(stepper: stepper)
        self.mailbox = mailbox
    }

    /// Drains the mailbox until it is closed and empty: one task per subscriber, parked
    /// (not polling) while the mailbox is empty.
    func run() async {
        while true {
            switch mailbox.next() {
            case .signal(let signal):
                machine.handle(signal, gate: mailbox.gate, target: mailbox)
                if machine.isDead { mailbox.close() }
            case .empty:
                await mailbox.waitForSignal()
            case .closed:
                return
            }
        }
    }
}
