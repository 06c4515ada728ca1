import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The `actor` design: a ``StepActor`` owns the state machine (``ActorMachine``); every signal
/// reaches it through one order-preserving mailbox, a ring buffer of recycled slots drained
/// on the actor's own serial executor. A drain runs until the mailbox is empty; only a signal
/// that finds it idle starts the next one. A steady stream of signals therefore allocates
/// nothing and needs no task, continuation or executor hop per signal, and a wake-up allocates
/// nothing either (a dispatch user-data source, not a task).
///
/// `receive(_:)` returns `.none`; demand after a `.more` goes upstream from the actor (rules
/// D3/D4 hold in their asynchronous form: exactly one `request(.max(1))` per `.more`, soon
/// after). The subscription is answered on the subscribing thread (``ActorGate/answer(_:post:)``).
/// `cancel()` raises a flag the actor checks right before every stepper call (rule C4): once
/// `cancel()` returns the stepper is called at most once more (a call already begun).
/// A promise keeps the mailbox, and so the actor, alive: kept by the stepper, it still acts
/// after the caller let go of the subscriber, as in the other designs.
///
/// Why a lock and not a lock-free queue: the mailbox's lock is held for a push or a pop of one
/// slot and never across a call-out, and in the synchronous case producer and consumer are the
/// same thread (upstream answers the actor's `request` on the actor), so it is uncontended. A
/// lock-free multi-producer queue would need node recycling that is safe against ABA; the ring
/// needs none and allocates only when it grows past the most signals ever queued at once.
///
/// Cost per element (synchronous `.more`): two mailbox pushes and pops (input, promise), each
/// one uncontended lock (the promise is popped while the machine still steps, so its `.more`
/// becomes the demand the actor requests); no allocation and no generic-metadata look-up (the ring holds
/// trivial, non-generic slots; the input values sit in a typed buffer beside it).
/// Cross-thread `.more` when the actor was idle: one wake-up of the actor's queue.
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
        mailbox.post(input: input)
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

/// The mailbox between the subscriber's callers and the actor; also the promises' target.
///
/// Waking: a drain is scheduled when a signal arrives and none is scheduled or running; the
/// drain runs on the actor's serial queue, isolated to the actor, and ends when the ring is
/// empty. It is started through a dispatch user-data source aimed at that queue: waking
/// allocates nothing (no task, job or closure per wake-up), and the mailbox is retained while
/// a drain is scheduled, so a drain never outlives it.
@usableFromInline
final class StepMailbox<Input, Failure: Error>: StepPromiseTarget,
    @unchecked Sendable  // `ring` and the input buffers are behind `ring`'s lock; `gate` is atomic.
{
    private let ring = Mutex(Unchecked(MailboxRing()))  // Unchecked: signals hold non-Sendable subscriptions
    /// The queued inputs' values, one slot per ring slot; resized with the ring, under its lock.
    @exclusivity(unchecked) private var inputs: UnsafeMutablePointer<Input>
    /// The input the actor is handling: moved here from `inputs` by ``next(endingDrain:remaining:)``, so that producers
    /// may reuse (or move) the ring slot while the stepper runs. Only the drain touches it.
    let current: UnsafeMutablePointer<Input>
    let gate = ActorGate()
    private let actor: StepActor<Input, Failure>
    /// Fires the drain on the actor's queue; one `or` per scheduled drain.
    private let wake: DispatchSourceUserDataOr

    @usableFromInline
    init(stepper: StepperBox<Input, Failure>) {
        inputs = .allocate(capacity: MailboxRing.initialCapacity)
        current = .allocate(capacity: 1)
        actor = StepActor(stepper: stepper)
        wake = DispatchSource.makeUserDataOrSource(queue: actor.executor.queue)
        // Unowned: a scheduled drain holds a retain of the mailbox (see `schedule()`).
        wake.setEventHandler { [unowned(unsafe) self] in self.drain() }
        wake.activate()
    }

    deinit {
        // No drain is scheduled (it would retain the mailbox), and a queued signal always has
        // one: the ring is empty and no input value is left to deinitialise.
        wake.cancel()
        inputs.deallocate()
        current.deallocate()
    }

    /// Queues a signal and schedules a drain if none is scheduled or running. Signals from one
    /// thread keep their order; upstream's are serial. Returns false if the mailbox is closed
    /// (the signal is dropped): the caller answers as a dead machine would.
    @discardableResult
    func post(_ signal: MailboxSignal) -> Bool {
        let signal = Unchecked(signal)
        return post { ring in _ = ring.push(signal.value) }
    }

    /// Queues an input.
    func post(input: Input) {
        post { ring in (inputs + ring.push(MailboxRing.Slot(kind: .input))).initialize(to: input) }
    }

    /// Pushes under the lock (growing the ring first if it is full), then schedules a drain.
    @discardableResult
    private func post(_ push: (inout MailboxRing) -> Void) -> Bool {
        countIfRingBusy()
        let (accepted, mustSchedule) = ring.withLock { ring -> (Bool, Bool) in
            guard !ring.value.closed else { return (false, false) }
            if ring.value.isFull { grow(&ring.value) }
            push(&ring.value)
            guard !ring.value.scheduled else { return (true, false) }
            ring.value.scheduled = true
            return (true, true)
        }
        if mustSchedule { schedule() }  // after unlocking: the drain may start at once
        return accepted
    }

    /// A counting build counts a ring lock that is busy just before a signal takes it
    /// (``ContentionEvent/lockSlowPath``: a try-lock probe, so the lock's own code is unchanged);
    /// any other build does nothing here.
    @inline(__always)
    private func countIfRingBusy() {
        #if STEPBENCH_COUNTING
            if ring.withLockIfAvailable({ _ in () }) == nil { ContentionEvent.lockSlowPath.count() }
        #endif
    }

    /// Starts a drain on the actor's queue, holding the mailbox until it ends. At most one is
    /// scheduled at a time (`scheduled`), so no two `or`s coalesce into one handler call.
    private func schedule() {
        ContentionEvent.drainWakeup.count()
        _ = Unmanaged.passRetained(self)
        wake.or(data: 1)
    }

    /// The wake source's handler, on the actor's queue: handles signals until the ring is empty.
    private func drain() {
        actor.preconditionIsolated("the actor mailbox's drain runs on the actor's serial queue")
        drainOnActor(actor, self)
        Unmanaged.passUnretained(self).release()  // taken by `schedule()`
    }

    /// `StepActor.drain` called synchronously, as the isolated code it is: the caller is on the
    /// actor's serial executor (checked just before). This is what `assumeIsolated` does, minus
    /// the context it allocates on every call (the profile showed two allocations per drain,
    /// that is per element when every `.more` comes from another thread). The cast only drops
    /// `isolated` from the parameter, which does not change the calling convention. Made once,
    /// in `init`: a closure made in this generic class captures its generic context.
    private let drainOnActor: (StepActor<Input, Failure>, StepMailbox) -> Void = {
        let isolated: (isolated StepActor<Input, Failure>, StepMailbox) -> Void = { actor, mailbox in
            actor.drain(mailbox)
        }
        return unsafeBitCast(isolated, to: ((StepActor<Input, Failure>, StepMailbox) -> Void).self)
    }()

    /// Doubles the ring and its input buffer, keeping the order. The only allocation after
    /// `init`: it happens when more signals are queued at once than ever before.
    private func grow(_ ring: inout MailboxRing) {
        let larger = UnsafeMutablePointer<Input>.allocate(capacity: ring.capacity * 2)
        for k in 0..<ring.count {
            let index = (ring.head &+ k) & (ring.capacity &- 1)
            if ring.slots[index].kind == .input { (larger + k).moveInitialize(from: inputs + index, count: 1) }
        }
        inputs.deallocate()
        inputs = larger
        ring.grow()
    }

    /// For the drain: the next signal (an input's value moved to `current`), or `.empty`; how
    /// many are queued behind it goes to `remaining` (an inout: a returned tuple made the
    /// signal's enum be copied and destroyed through outlined value witnesses). With `endingDrain`, `.empty` ends the drain (`scheduled`
    /// is cleared under the same lock, so a signal pushed after this schedules a new one);
    /// without it (the signals of a stepper call) the drain goes on, and so does `handling`.
    func next(endingDrain: Bool, remaining: inout Int) -> MailboxNext {
        countIfRingBusy()
        return ring.withLock { ring -> MailboxNext in
            guard let (slot, index) = ring.value.pop() else {
                if endingDrain {
                    ring.value.scheduled = false
                    ring.value.handling = false
                }
                remaining = 0
                return .empty
            }
            ring.value.handling = true
            let next: MailboxNext
            switch slot.kind {
            case .input:
                current.moveInitialize(from: inputs + index, count: 1)
                next = .input
            case .promise: next = .promise(slot.promiseID, slot.request)
            case .subscription: next = .other(Unchecked(.subscription(ring.value.takeSubscription())))
            case .completion: next = .other(Unchecked(.completion(ring.value.takeCompletion())))
            case .cancel, .empty: next = .other(Unchecked(.cancel))  // `.empty` is never queued
            }
            remaining = ring.value.count
            return next
        }
    }

    /// Accepts no more signals (the machine died); what is queued is still handled.
    func close() {
        ring.withLock { $0.value.closed = true }
    }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        guard gate.admitsPromise(id: id) else { return }
        post { ring in _ = ring.push(MailboxRing.Slot(kind: .promise, promiseID: id, request: request)) }
    }

    var description: String {
        ring.withLock { ring in
            let r = ring.value
            return
                "\(r.count) queued, \(r.handling ? "handling one" : "idle"), drain \(r.scheduled ? "scheduled" : "not scheduled")\(r.closed ? ", closed" : "")"
        }
    }

    func waitUntilIdle() {
        while !ring.withLock({ $0.value.count == 0 && !$0.value.handling }) {
            usleep(20)
        }
    }
}

/// Owns the state machine; handles the mailbox's signals one at a time, in order, on its own
/// serial queue.
actor StepActor<Input, Failure: Error> {
    /// Actor-isolated, so accesses are already serialised; the run-time exclusivity check
    /// would re-prove it on every signal (about 80 instructions per element in the profile).
    @exclusivity(unchecked) private var machine: ActorMachine
    nonisolated let executor = QueueExecutor(label: "stepbench.actor")

    /// Runs on its own serial queue, not the cooperative pool (see ``QueueExecutor``).
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(stepper: StepperBox<Input, Failure>) {
        machine = ActorMachine(stepper: stepper)
    }

    /// Handles the mailbox's signals until it is empty. Synchronous: the hot loop has no
    /// suspension points, no task and no hop.
    func drain(_ mailbox: StepMailbox<Input, Failure>) {
        // Made once per drain: converting the generic mailbox to the existential per element
        // looked its metadata up every time.
        let target: any StepPromiseTarget = mailbox
        var remaining = 0
        while true {
            switch mailbox.next(endingDrain: true, remaining: &remaining) {
            case .empty: return
            case .input: handleInput(mailbox, target)
            case .promise(let id, let request): machine.handlePromise(id: id, request: request, gate: mailbox.gate)
            case .other(let signal): machine.handle(signal.value, gate: mailbox.gate)
            }
            if machine.isDead { mailbox.close() }
        }
    }

    /// Handles the input the drain took: the stepper call, then the signals that arrived
    /// during it, handled while the machine still steps (see ``ActorMachine``); an input among
    /// them is dropped, as the stepping machine would drop it (S1).
    private func handleInput(_ mailbox: StepMailbox<Input, Failure>, _ target: any StepPromiseTarget) {
        guard let (stepper, promise) = machine.beginInput(gate: mailbox.gate, target: target) else {
            mailbox.current.deinitialize(count: 1)  // dropped (no demand, or cancelled)
            return
        }
        unsafeDowncast(stepper, to: StepperBox<Input, Failure>.self).input(mailbox.current.move(), promise)
        // The signals queued when the stepper returned, and no more: later ones wait for the
        // drain, so that a flood cannot hold the machine stepping.
        var remaining = 0
        var left = -1  // how many are still to take: known after the first
        while left != 0 {
            switch mailbox.next(endingDrain: false, remaining: &remaining) {
            case .empty: break
            case .input: mailbox.current.deinitialize(count: 1)
            case .promise(let id, let request): machine.handlePromise(id: id, request: request, gate: mailbox.gate)
            case .other(let signal): machine.handle(signal.value, gate: mailbox.gate)
            }
            left = left < 0 ? remaining : left - 1
        }
        machine.endInput(gate: mailbox.gate)
    }
}

/// What the drain finds in the mailbox.
enum MailboxNext: Sendable {
    /// The next signal is an input; its value has been moved to the mailbox's `current`.
    case input
    /// The next signal is a promise's call (the common case beside inputs: no payload to copy).
    case promise(StepStateMachine.PromiseID, StepRequest)
    /// The next signal, a rare one (subscription, completion, cancel).
    case other(Unchecked<MailboxSignal>)
    /// Nothing queued: the drain ends.
    case empty
}
