import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The mailbox between the subscriber's callers and the actor; also the promises' target.
///
/// Draining: a signal that finds the mailbox idle (no drain running) takes the drain with one
/// compare-exchange of ``state`` and drains at once, on the signalling thread, holding the
/// actor's isolation (``DrainExecutor``) until both queues are empty; a signal that finds a drain
/// running is queued in the ring, under its lock, and left to it. The draining thread steps those
/// too, but only a fair share (``drainShare``): past it, with more of them queued, the drain
/// gives its caller back and goes on on a Dispatch worker (``handOff()``), so no `receive(_:)`
/// is kept to step an endless stream other threads feed. So an idle actor costs no hop, no
/// wake-up and no pool thread, and a stepper that blocks holds the thread that drains: the
/// caller's, or a worker's after a hand-off; no number of blocked steppers stalls the others
/// (rule R4: each subscription's drain is its own).
/// Re-entrant signals (a `.more` inside the stepper, an input upstream sends from inside the
/// actor's `request`) find the drain running on their own thread and are queued: the stack does
/// not grow with the elements (S5). They go to a second queue, ``own``, that only the draining
/// thread touches, so they take no lock: in the synchronous case (upstream answers the actor's
/// `request` from inside the drain) an element takes no lock: one compare-exchange to take the
/// drain, one exchange to end it.
///
/// Ending a drain without the lock: the drain clears its bit, then looks at ``ringCount``; a
/// signal queued behind it stores ``ringCount``, then tries to take the drain. Both sequentially
/// consistent, so at least one of them sees the other: the drain goes on, or the signal's thread
/// drains. Nothing is left queued with no drain to come.
///
/// Order: signals from one thread keep their order. The draining thread's own signals are all
/// in ``own`` (or, for the input whose post took the drain, in `current`), the other threads'
/// are all in the ring, and the drain merges the two queues, preferring the
/// ring when it holds anything, so that the draining thread's own chain (input, `.more`,
/// input, …) cannot starve another thread's `cancel()`.
@usableFromInline
final class StepMailbox<Input, Failure: Error>: StepPromiseTarget,
    @unchecked Sendable  // `ring` and the input buffers are behind `ring`'s lock; `gate` and `state` are atomic.
{
    /// ``running``: a drain runs (its thread holds the actor); ``closed``: no more signals are
    /// accepted (the machine died; set by the drain, under the ring's lock).
    private let state = Atomic<UInt8>(0)
    private static var running: UInt8 { 1 }
    private static var closed: UInt8 { 2 }
    private let ring = Mutex(Unchecked(MailboxRing()))  // Unchecked: signals hold non-Sendable subscriptions
    /// The queued inputs' values, one slot per ring slot; resized with the ring, under its lock.
    @exclusivity(unchecked) private var inputs: UnsafeMutablePointer<Input>
    /// How many signals the ring holds, published under its lock for the drain to read without
    /// it: a hint for the order of the two queues, and what an ending drain looks at.
    private let ringCount = Atomic<Int>(0)
    /// The signals the draining thread sends itself, and their inputs' values: touched only by
    /// the thread that holds the actor's isolation (``DrainExecutor/isHeldByCurrentThread``).
    @exclusivity(unchecked) private var own = MailboxRing()
    @exclusivity(unchecked) private var ownInputs: UnsafeMutablePointer<Input>
    /// The input the actor is handling: moved here from `inputs` by ``next(endingDrain:remaining:)``, so that producers
    /// may reuse (or move) the ring slot while the stepper runs. Only the drain touches it.
    let current: UnsafeMutablePointer<Input>
    /// The drain is inside a stepper call, and the `.more` fulfilled inside it on the draining
    /// thread before anything else of that thread's (see ``completePromise(id:request:)``); only
    /// the draining thread reads or writes them.
    @exclusivity(unchecked) var stepping = false
    @exclusivity(unchecked) private var pendingMore = StepStateMachine.noPromiseID
    /// How many signals of the ring (other threads') this drain has handled; the draining
    /// thread's (see ``drainShare``).
    @exclusivity(unchecked) private var othersHandled = 0
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
        // Straight to the stepper only if this thread has nothing still queued in the ring (a
        // signal it posted while another thread drained, not yet handled): it must not overtake
        // it. A thread always sees its own push's count.
        if !actor.executor.isHeldByCurrentThread, ringCount.load(ordering: .relaxed) == 0, takeDrain() {
            current.initialize(to: input)
            drainOnActor(actor, self, true)
            return
        }
        // A closure literal, not one kept in a constant: that one captured the input in a box
        // (an allocation per element).
        post { queue, values in (values + queue.push(MailboxRing.Slot(kind: .input))).initialize(to: input) }
    }

    /// Queues a signal, and drains if it took the drain.
    @discardableResult
    private func post(_ push: (inout MailboxRing, UnsafeMutablePointer<Input>) -> Void) -> Bool {
        switch enter(push) {
        case .closed: return false
        case .queued: return true
        case .own: pushOwn(push)
        case .drain:
            pushOwn(push)
            drainOnActor(actor, self, false)
        case .queuedAndDrain: drainOnActor(actor, self, false)
        }
        return true
    }

    /// On the draining thread, answers `.own` (no lock: the drain is this thread's caller). On
    /// any other: an idle mailbox is taken with one compare-exchange (`.drain`); else, under the
    /// ring's lock, the signal is pushed to the ring if the mailbox is open (growing it first if
    /// it is full), and this thread then tries to take the drain, which may have ended
    /// meanwhile (`.queuedAndDrain`). `push` gets the queue and its inputs' buffer.
    @inline(__always)
    private func enter(_ push: (inout MailboxRing, UnsafeMutablePointer<Input>) -> Void) -> MailboxEntry {
        if actor.executor.isHeldByCurrentThread { return own.closed ? .closed : .own }
        if takeDrain() { return .drain }
        countIfRingBusy()
        let queued = ring.withLock { ring -> Bool in
            guard state.load(ordering: .relaxed) & Self.closed == 0 else { return false }
            if ring.value.isFull { grow(&ring.value, &inputs) }
            push(&ring.value, inputs)
            ringCount.store(ring.value.count, ordering: .sequentiallyConsistent)
            return true
        }
        guard queued else { return .closed }
        return takeDrain() ? .queuedAndDrain : .queued
    }

    /// Takes the drain if no drain runs and the mailbox is open: this thread then holds the
    /// actor's isolation.
    @inline(__always)
    private func takeDrain() -> Bool {
        guard state.compareExchange(expected: 0, desired: Self.running, ordering: .sequentiallyConsistent).exchanged
        else { return false }
        actor.executor.take()
        return true
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
    /// taken the actor's executor (``DrainExecutor/take()``, having won the drain, so no other
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
    /// `endingDrain`, `.empty` ends the drain (see the type's comment: a signal queued as it
    /// ends is not left behind); without it (the signals of a stepper call) the drain goes on.
    func next(endingDrain: Bool, remaining: inout Int) -> MailboxNext {
        while true {
            if ringCount.load(ordering: .relaxed) > 0 {
                countIfRingBusy()
                let popped = ring.withLock { ring -> MailboxNext? in
                    guard let (slot, index) = ring.value.pop() else { return nil }
                    // Releasing: a `waitUntilIdle` that reads the lower count sees this drain running.
                    ringCount.store(ring.value.count, ordering: .releasing)
                    remaining = ring.value.count + own.count
                    return take(slot, at: index, from: &ring.value, inputs)
                }
                if let popped {
                    othersHandled &+= 1
                    return popped
                }
            }
            if let (slot, index) = own.pop() {  // the ring is empty, or emptied since the count was read
                remaining = own.count + ringCount.load(ordering: .relaxed)
                return take(slot, at: index, from: &own, ownInputs)
            }
            remaining = 0
            guard endingDrain else { return .empty }
            // Both queues empty: give the actor back, then look again (a signal queued as the
            // drain ended either sees it ended and drains, or is seen here).
            actor.executor.release()
            state.bitwiseAnd(~Self.running, ordering: .sequentiallyConsistent)
            guard ringCount.load(ordering: .sequentiallyConsistent) > 0, takeDrain() else { return .empty }
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
        ring.withLock { _ in _ = state.bitwiseOr(Self.closed, ordering: .sequentiallyConsistent) }
    }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        guard gate.admitsPromise(id: id) else { return }
        // A `.more` inside the stepper call, on the draining thread, with nothing of this
        // thread's queued before it: the drain would take it first once the stepper returns.
        // It is kept in `pendingMore` instead of queued, and the drain takes it from there.
        // `stepping`, `own` and `pendingMore` are the draining thread's: read only once that is
        // this thread.
        if request == .more, actor.executor.isHeldByCurrentThread, stepping, own.count == 0,
            pendingMore == StepStateMachine.noPromiseID
        {
            pendingMore = id
            return
        }
        post { ring, _ in _ = ring.push(MailboxRing.Slot(kind: .promise, promiseID: id, request: request)) }
    }

    /// For the drain, when the stepper returned: the id of a `.more` kept in `pendingMore`
    /// (``StepStateMachine/noPromiseID`` if none), which it handles before anything queued.
    func takePendingMore() -> StepStateMachine.PromiseID {
        defer { pendingMore = StepStateMachine.noPromiseID }
        return pendingMore
    }

    /// How many of other threads' signals one drain handles on its caller's thread: past them,
    /// with its own thread's signals all handled and more of the others' queued, the drain gives
    /// its caller back and goes on on a Dispatch worker (``handOff()``). So a `receive(_:)`
    /// steps its own input and at most this many others', however many threads keep sending.
    static var drainShare: Int { mailboxDrainShare }

    /// For the drain, as it begins: none of other threads' signals handled yet.
    @inline(__always)
    func beginDrain() { othersHandled = 0 }

    /// For the drain, between two signals: whether it has handled its share of other threads'
    /// signals (``drainShare``) and more are queued. Only once this thread's own queue is empty:
    /// a signal this thread sends after its call returns goes to the ring, so one left in
    /// ``own`` could be overtaken by it.
    @inline(__always)
    var owesHandOff: Bool {
        // The constant at file scope: `Self.drainShare` in this generic class looked its
        // metadata up.
        othersHandled >= mailboxDrainShare && own.count == 0 && ringCount.load(ordering: .relaxed) > 0
    }

    /// Gives the drain's caller back: the drain stays running (no other thread takes it, so
    /// every signal is queued for it) and goes on on a Dispatch worker, which takes the actor's
    /// isolation over from this thread. The only allocation after `init` besides a queue's
    /// growth: one block per hand-off, that is per ``drainShare`` signals of other threads at
    /// most.
    func handOff() {
        othersHandled = 0
        actor.executor.handOver()
        DispatchQueue.global().async { [self] in
            actor.executor.takeOver()
            drainOnActor(actor, self, false)
        }
    }

    /// Whether any signal is queued, in either queue; for the drain.
    var hasQueuedSignals: Bool { own.count > 0 || ringCount.load(ordering: .relaxed) > 0 }

    var description: String {
        let state = state.load(ordering: .sequentiallyConsistent)
        let queued = ring.withLock { $0.value.count }
        return
            "\(queued) queued, drain \(state & Self.running != 0 ? "running" : "not running")\(state & Self.closed != 0 ? ", closed" : "")"
    }

    /// Waits until nothing is queued and no drain runs. The ring's count first: a signal queued
    /// before this call keeps it above 0 until a drain pops it, and a drain pops only while its
    /// bit is up, so reading 0 and then no drain means that signal was handled. (Read the
    /// other way round, a drain could end, take the mailbox again for a signal queued as it
    /// ended, and pop it between the two reads.)
    func waitUntilIdle() {
        while ringCount.load(ordering: .sequentiallyConsistent) != 0
            || state.load(ordering: .sequentiallyConsistent) & Self.running != 0
        {
            usleep(20)
        }
    }
}

/// ``StepMailbox/drainShare``, outside the generic class.
let mailboxDrainShare = 16

/// Where a signal goes (``StepMailbox``'s `enter`). Not nested in the generic class: its nested
/// types are generic, and their metadata was looked up on every post.
enum MailboxEntry {
    /// Dropped: the mailbox is closed.
    case closed
    /// Pushed to the ring, for the drain running on another thread.
    case queued
    /// To ``own``: this thread is draining (a re-entrant signal).
    case own
    /// This thread took the drain (no drain was running, so its own queue is empty; the ring may
    /// still hold a signal this thread queued while another thread drained).
    case drain
    /// Pushed to the ring, and then this thread took the drain (the one that was running ended
    /// before it saw the signal).
    case queuedAndDrain
}
