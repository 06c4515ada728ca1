import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The mailbox between the subscriber's callers and the actor; also the promises' target.
///
/// Draining: a signal that finds the mailbox idle (no drain running) drains it at once, on the
/// signalling thread, holding the actor's isolation (``DrainExecutor``) until the ring is empty;
/// a signal that finds a drain running is queued and left to it. So an idle actor costs no hop,
/// no wake-up and no pool thread, and a stepper that blocks holds the thread that signalled, as
/// in the synchronous designs: no number of blocked steppers stalls the others (rule R4).
/// Re-entrant signals (a `.more` inside the stepper, an input upstream sends from inside the
/// actor's `request`) find the drain running on their own thread and are queued: the stack does
/// not grow with the elements (S5). They go to a second queue, ``own``, that only the draining
/// thread touches, so they take no lock: in the synchronous case (upstream answers the actor's
/// `request` from inside the drain) an element costs no lock at all.
///
/// Order: signals from one thread keep their order. The draining thread's own signals are all
/// in ``own`` (or, for the input whose post took the drain, in `current`), the other threads'
/// are all in the ring, and the drain merges the two queues, preferring the
/// ring when it holds anything, so that the draining thread's own chain (input, `.more`,
/// input, …) cannot starve another thread's `cancel()`.
@usableFromInline
final class StepMailbox<Input, Failure: Error>: StepPromiseTarget,
    @unchecked Sendable  // `ring` and the input buffers are behind `ring`'s lock; `gate` is atomic.
{
    private let ring = Mutex(Unchecked(MailboxRing()))  // Unchecked: signals hold non-Sendable subscriptions
    /// The queued inputs' values, one slot per ring slot; resized with the ring, under its lock.
    @exclusivity(unchecked) private var inputs: UnsafeMutablePointer<Input>
    /// How many signals the ring holds, published under its lock for the drain to read without
    /// it (a hint: the drain pops under the lock).
    private let ringCount = Atomic<Int>(0)
    /// The signals the draining thread sends itself, and their inputs' values: touched only by
    /// the thread that holds the actor's isolation (``DrainExecutor/isHeldByCurrentThread``).
    @exclusivity(unchecked) private var own = MailboxRing()
    @exclusivity(unchecked) private var ownInputs: UnsafeMutablePointer<Input>
    /// The input the actor is handling: moved here from `inputs` by ``next(endingDrain:remaining:)``, so that producers
    /// may reuse (or move) the ring slot while the stepper runs. Only the drain touches it.
    let current: UnsafeMutablePointer<Input>
    let gate = ActorGate()
    private let actor: StepActor<Input, Failure>

    @usableFromInline
    init(stepper: StepperBox<Input, Failure>) {
        inputs = .allocate(capacity: MailboxRing.initialCapacity)
        ownInputs = .allocate(capacity: MailboxRing.initialCapacity)
        current = .allocate(capacity: 1)
        actor = StepActor(stepper: stepper)
    }

    deinit {
        // No drain is running (it runs inside a call on the mailbox), so both queues are empty
        // and no input value is left to deinitialise.
        inputs.deallocate()
        ownInputs.deallocate()
        current.deallocate()
    }

    /// Queues a signal and, if no drain is running, drains the mailbox on this thread. Signals
    /// from one thread keep their order; upstream's are serial. Returns false if the mailbox is
    /// closed (the signal is dropped): the caller answers as a dead machine would.
    @discardableResult
    func post(_ signal: MailboxSignal) -> Bool {
        let signal = Unchecked(signal)
        return post { ring, _ in _ = ring.push(signal.value) }
    }

    /// Queues an input (one the actor asked for: ``ActorGate/takeInput()`` let it in). One that
    /// takes the drain is not queued: it goes straight to `current`, and the drain begins with it.
    func post(input: Input) {
        // Closure literals, not one closure kept in a constant: that one captured the input in
        // a box (an allocation per element).
        switch enter({ Self.push(input, to: &$0, $1) }) {
        case .closed, .queued: return
        case .own: pushOwn { Self.push(input, to: &$0, $1) }
        case .drain:
            current.initialize(to: input)
            drainOnActor(actor, self, true)
        }
    }

    @inline(__always)
    private static func push(_ input: Input, to queue: inout MailboxRing, _ values: UnsafeMutablePointer<Input>) {
        (values + queue.push(MailboxRing.Slot(kind: .input))).initialize(to: input)
    }

    /// Queues any other signal, and drains if it took the drain.
    @discardableResult
    private func post(_ push: (inout MailboxRing, UnsafeMutablePointer<Input>) -> Void) -> Bool {
        switch enter(push) {
        case .closed: return false
        case .queued: return true
        case .own: pushOwn(push)
        case .drain:
            pushOwn(push)
            drainOnActor(actor, self, false)
        }
        return true
    }

    /// On the draining thread, answers `.own` (no lock: the drain is this thread's caller). On
    /// any other, under the ring's lock: pushes to the ring if a drain runs (growing it first
    /// if it is full), else takes the actor's isolation for this thread, in the same critical
    /// section. `push` gets the queue and its inputs' buffer.
    @inline(__always)
    private func enter(_ push: (inout MailboxRing, UnsafeMutablePointer<Input>) -> Void) -> MailboxEntry {
        if actor.executor.isHeldByCurrentThread { return own.closed ? .closed : .own }
        countIfRingBusy()
        return ring.withLock { ring -> MailboxEntry in
            guard !ring.value.closed else { return .closed }
            guard ring.value.scheduled else {
                ring.value.scheduled = true
                ring.value.handling = true
                actor.executor.take()
                return .drain
            }
            if ring.value.isFull { grow(&ring.value, &inputs) }
            push(&ring.value, inputs)
            ringCount.store(ring.value.count, ordering: .relaxed)
            return .queued
        }
    }

    /// Pushes to the drain's own queue; only the draining thread calls it.
    @inline(__always)
    private func pushOwn(_ push: (inout MailboxRing, UnsafeMutablePointer<Input>) -> Void) {
        if own.isFull { grow(&own, &ownInputs) }
        push(&own, ownInputs)
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

    /// `StepActor.drain` called synchronously, as the isolated code it is: the caller has just
    /// taken the actor's executor (``DrainExecutor/take()``, under the ring's lock, so no other
    /// thread drains). This is what `assumeIsolated` does, minus
    /// the context it allocates on every call (the profile showed two allocations per drain,
    /// that is per element when every `.more` comes from another thread). The cast only drops
    /// `isolated` from the parameter, which does not change the calling convention. Made once,
    /// in `init`: a closure made in this generic class captures its generic context.
    private let drainOnActor: (StepActor<Input, Failure>, StepMailbox, Bool) -> Void = {
        let isolated: (isolated StepActor<Input, Failure>, StepMailbox, Bool) -> Void = { actor, mailbox, input in
            actor.drain(mailbox, beginningWithInput: input)
        }
        return unsafeBitCast(isolated, to: ((StepActor<Input, Failure>, StepMailbox, Bool) -> Void).self)
    }()

    /// Doubles a queue and its input buffer, keeping the order. The only allocation after
    /// `init`: it happens when more signals are queued at once than ever before.
    private func grow(_ ring: inout MailboxRing, _ values: inout UnsafeMutablePointer<Input>) {
        let larger = UnsafeMutablePointer<Input>.allocate(capacity: ring.capacity * 2)
        for k in 0..<ring.count {
            let index = (ring.head &+ k) & (ring.capacity &- 1)
            if ring.slots[index].kind == .input { (larger + k).moveInitialize(from: values + index, count: 1) }
        }
        values.deallocate()
        values = larger
        ring.grow()
    }

    /// For the drain: the next signal (an input's value moved to `current`), or `.empty`; how
    /// many are queued behind it goes to `remaining` (an inout: a returned tuple made the
    /// signal's enum be copied and destroyed through outlined value witnesses). The ring's
    /// signals come first when it holds any; else the drain's own, without the lock. With
    /// `endingDrain`, `.empty` ends the drain (`scheduled` is cleared under the ring's lock, so a
    /// signal pushed after this schedules a new one); without it (the signals of a stepper
    /// call) the drain goes on, and so does `handling`.
    func next(endingDrain: Bool, remaining: inout Int) -> MailboxNext {
        if ringCount.load(ordering: .relaxed) == 0, let (slot, index) = own.pop() {
            remaining = own.count
            return take(slot, at: index, from: &own, ownInputs)
        }
        countIfRingBusy()
        return ring.withLock { ring -> MailboxNext in
            if let (slot, index) = ring.value.pop() {
                ringCount.store(ring.value.count, ordering: .relaxed)
                ring.value.handling = true
                remaining = ring.value.count + own.count
                return take(slot, at: index, from: &ring.value, inputs)
            }
            if let (slot, index) = own.pop() {  // the ring emptied since the hint was read
                remaining = own.count
                return take(slot, at: index, from: &own, ownInputs)
            }
            if endingDrain {
                ring.value.scheduled = false
                ring.value.handling = false
                actor.executor.release()
            }
            remaining = 0
            return .empty
        }
    }

    /// The popped `slot` as the drain gets it: an input's value moved to `current`, a rare
    /// signal's payload taken from `queue`'s side queues.
    @inline(__always)
    private func take(
        _ slot: MailboxRing.Slot, at index: Int, from queue: inout MailboxRing, _ values: UnsafeMutablePointer<Input>
    ) -> MailboxNext {
        switch slot.kind {
        case .input:
            current.moveInitialize(from: values + index, count: 1)
            return .input
        case .promise: return .promise(slot.promiseID, slot.request)
        case .subscription: return .other(Unchecked(.subscription(queue.takeSubscription())))
        case .completion: return .other(Unchecked(.completion(queue.takeCompletion())))
        case .cancel, .empty: return .other(Unchecked(.cancel))  // `.empty` is never queued
        }
    }

    /// Accepts no more signals (the machine died); what is queued is still handled. Called by
    /// the drain.
    func close() {
        own.closed = true
        ring.withLock { $0.value.closed = true }
    }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        guard gate.admitsPromise(id: id) else { return }
        post { ring, _ in _ = ring.push(MailboxRing.Slot(kind: .promise, promiseID: id, request: request)) }
    }

    var description: String {
        ring.withLock { ring in
            let r = ring.value
            return
                "\(r.count) queued, \(r.handling ? "handling one" : "idle"), drain \(r.scheduled ? "running" : "not running")\(r.closed ? ", closed" : "")"
        }
    }

    func waitUntilIdle() {
        while !ring.withLock({ $0.value.count == 0 && !$0.value.handling }) {
            usleep(20)
        }
    }
}

/// Where a signal goes (``StepMailbox``'s `enter`; not nested in the generic class, whose nested types are generic: their metadata was looked up on every post).
enum MailboxEntry {
    /// Dropped: the mailbox is closed.
    case closed
    /// Pushed to the ring, for the drain running on another thread.
    case queued
    /// To ``own``: this thread is draining (a re-entrant signal).
    case own
    /// This thread took the drain (no drain was running, so both queues are empty).
    case drain
}
