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
/// one uncontended lock; no allocation and no generic-metadata look-up (the ring holds
/// non-generic ``MailboxSignal``s; the input values sit in a typed buffer beside it). Cross-thread `.more` when the actor was idle: one
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
        mailbox.post(input: input)
        return .none
    }

    @usableFromInline func receive(completion: Subscribers.Completion<Failure>) { mailbox.post(.completion(.init(completion))) }

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
    @unchecked Sendable  // `ring` and the input buffers are behind `ring`'s lock; `gate` is atomic.
{
    private let ring = Mutex(Unchecked(MailboxRing()))  // Unchecked: signals hold non-Sendable subscriptions
    /// The queued inputs' values, one slot per ring slot; resized with the ring, under its lock.
    @exclusivity(unchecked) private var inputs: UnsafeMutablePointer<Input>
    /// The input the actor is handling: moved here from `inputs` by ``next()``, so that producers
    /// may reuse (or move) the ring slot while the stepper runs. Only the drain task touches it.
    let current: UnsafeMutablePointer<Input>
    let gate = ActorGate()

    @usableFromInline
    init(stepper: StepperBox<Input, Failure>) {
        inputs = .allocate(capacity: MailboxRing.initialCapacity)
        current = .allocate(capacity: 1)
        let actor = StepActor<Input, Failure>(stepper: stepper, mailbox: self)
        Task.detached(executorPreference: actor.executor) { await actor.run() }
    }

    deinit {
        // The drain task ends only once the ring is closed and empty, and it holds this mailbox
        // until then: no input value is left to deinitialise.
        inputs.deallocate()
        current.deallocate()
    }

    /// Queues a signal and wakes the actor if it was parked. Signals from one thread keep their
    /// order; upstream's are serial. Returns false if the mailbox is closed (the signal is
    /// dropped): the caller answers as a dead machine would.
    @discardableResult
    func post(_ signal: MailboxSignal) -> Bool {
        let signal = Unchecked(signal)
        return post { ring in _ = ring.push(signal.value) }
    }

    /// Queues an input.
    func post(input: Input) {
        post { ring in (inputs + ring.push(.input)).initialize(to: input) }
    }

    /// Pushes under the lock (growing the ring first if it is full), then wakes a parked task.
    private func post(_ push: (inout MailboxRing) -> Void) -> Bool {
        let (accepted, waiter) = ring.withLock { ring -> (Bool, UnsafeContinuation<Void, Never>?) in
            guard !ring.value.closed else { return (false, nil) }
            if ring.value.isFull { grow(&ring.value) }
            push(&ring.value)
            return (true, ring.value.takeWaiter())
        }
        waiter?.resume()  // after unlocking: the task may run at once on another thread
        return accepted
    }

    /// Doubles the ring and its input buffer, keeping the order. The only allocation after
    /// `init`: it happens when more signals are queued at once than ever before.
    private func grow(_ ring: inout MailboxRing) {
        let larger = UnsafeMutablePointer<Input>.allocate(capacity: ring.capacity * 2)
        for k in 0..<ring.count {
            let index = (ring.head &+ k) & (ring.capacity &- 1)
            if case .input = ring.slots[index] { (larger + k).moveInitialize(from: inputs + index, count: 1) }
        }
        inputs.deallocate()
        inputs = larger
        ring.grow()
    }

    /// For the drain task: the next signal (an input's value moved to `current`), `.empty` or
    /// `.closed`. Taking the next signal also marks the previous one handled.
    func next() -> MailboxNext {
        ring.withLock { ring -> MailboxNext in
            ring.value.handling = false
            guard let (signal, index) = ring.value.pop() else {
                return ring.value.closed ? .closed : .empty
            }
            ring.value.handling = true
            if case .input = signal {
                current.moveInitialize(from: inputs + index, count: 1)
                return .input
            }
            return .other(Unchecked(signal))
        }
    }

    /// Parks the drain task until a signal is queued or the mailbox closes (returns at once if
    /// that already happened: a signal queued between `next()` and here is not missed).
    func waitForSignal() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let ready = ring.withLock { ring -> Bool in
                if ring.value.count > 0 || ring.value.closed { return true }
                ring.value.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Accepts no more signals; the drain task handles what is queued, then ends.
    func close() {
        let waiter = ring.withLock { ring -> UnsafeContinuation<Void, Never>? in
            ring.value.closed = true
            return ring.value.takeWaiter()
        }
        waiter?.resume()
    }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        if gate.admitsPromise(id: id) { post(.promise(id, request)) }
    }

    var description: String {
        ring.withLock { ring in
            let r = ring.value
            return "\(r.count) queued, \(r.handling ? "handling one" : "idle"), task \(r.waiter == nil ? "running" : "parked")\(r.closed ? ", closed" : "")"
        }
    }

    func waitUntilIdle() {
        while !ring.withLock({ $0.value.count == 0 && !$0.value.handling }) {
            usleep(20)
        }
    }
}

/// Owns the state machine; handles the mailbox's signals one at a time, in order.
actor StepActor<Input, Failure: Error> {
    /// Actor-isolated, so accesses are already serialised; the run-time exclusivity check
    /// would re-prove it on every signal (about 80 instructions per element in the profile).
    @exclusivity(unchecked) private var machine: ActorMachine
    private let mailbox: StepMailbox<Input, Failure>
    /// The mailbox as the promises' target, made once: converting the generic mailbox to the
    /// existential per element looked its metadata up every time (profile: ~330 per element).
    private let promiseTarget: any StepPromiseTarget
    nonisolated let executor = QueueExecutor(label: "stepbench.actor")

    /// Runs on its own serial queue, not the cooperative pool (see ``QueueExecutor``).
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(stepper: StepperBox<Input, Failure>, mailbox: StepMailbox<Input, Failure>) {
        machine = ActorMachine(stepper: stepper)
        self.mailbox = mailbox
        promiseTarget = mailbox
    }

    /// Drains the mailbox until it is closed and empty: one task per subscriber, parked
    /// (not polling) while the mailbox is empty.
    func run() async {
        while drain() {
            await mailbox.waitForSignal()
        }
    }

    /// Handles signals until the mailbox is empty (returns true: park) or closed and drained
    /// (returns false: the task ends). Synchronous, so the hot loop has no suspension points.
    private func drain() -> Bool {
        let current = mailbox.current
        while true {
            switch mailbox.next() {
            case .input:
                let delivered = machine.handle(.input, gate: mailbox.gate, target: promiseTarget) { stepper, promise in
                    unsafeDowncast(stepper, to: StepperBox<Input, Failure>.self).input(current.move(), promise)
                }
                if !delivered { current.deinitialize(count: 1) }  // dropped (no demand, or cancelled)
            case .other(let signal):
                machine.handle(signal.value, gate: mailbox.gate, target: promiseTarget) { _, _ in }
            case .empty:
                return true
            case .closed:
                return false
            }
            if machine.isDead { mailbox.close() }
        }
    }
}

/// The signals an actor mailbox has not yet handed out, in order, and its drain task's state.
/// Not generic (a push or pop costs no metadata look-up); the mailbox keeps an input's value in
/// its typed buffer at the slot's index.
struct MailboxRing {
    /// A ring of `capacity` slots (a power of two) starting at `head`; `count` are full.
    private(set) var slots: ContiguousArray<MailboxSignal?> = .init(repeating: nil, count: MailboxRing.initialCapacity)
    private(set) var head = 0
    private(set) var count = 0
    /// The drain task, parked because the ring was empty.
    var waiter: UnsafeContinuation<Void, Never>?
    /// No more signals are accepted: the machine died or the subscriber was deinitialised.
    var closed = false
    /// The actor is handling a signal it took (for `waitUntilIdle`).
    var handling = false

    static let initialCapacity = 8
    var capacity: Int { slots.count }
    var isFull: Bool { count == slots.count }

    /// Stores `signal` in the next free slot (the ring must not be full); returns its index.
    mutating func push(_ signal: MailboxSignal) -> Int {
        let index = (head &+ count) & (capacity &- 1)
        slots[index] = signal
        count &+= 1
        return index
    }

    /// Takes the oldest signal and its slot's index.
    mutating func pop() -> (MailboxSignal, index: Int)? {
        guard count > 0, let signal = slots[head].take() else { return nil }
        let index = head
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        return (signal, index)
    }

    /// Doubles the ring: slot `(head + k) % capacity` moves to `k`.
    mutating func grow() {
        var larger = ContiguousArray<MailboxSignal?>(repeating: nil, count: capacity * 2)
        for k in 0..<count { larger[k] = slots[(head &+ k) & (capacity &- 1)].take() }
        slots = larger
        head = 0
    }

    mutating func takeWaiter() -> UnsafeContinuation<Void, Never>? {
        defer { waiter = nil }
        return waiter
    }
}

/// What the drain task finds in the mailbox.
enum MailboxNext: Sendable {
    /// The next signal is an input; its value has been moved to the mailbox's `current`.
    case input
    /// The next signal, not an input (the common input case carries no payload to copy).
    case other(Unchecked<MailboxSignal>)
    /// Nothing queued: park until the next signal (``waitForSignal()``).
    case empty
    /// Closed and drained: the task ends.
    case closed
}
