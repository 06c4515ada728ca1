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
/// not grow with the elements (S5).
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

    @usableFromInline
    init(stepper: StepperBox<Input, Failure>) {
        inputs = .allocate(capacity: MailboxRing.initialCapacity)
        current = .allocate(capacity: 1)
        actor = StepActor(stepper: stepper)
    }

    deinit {
        // No drain is running (it runs inside a call on the mailbox), so the ring is empty and
        // no input value is left to deinitialise.
        inputs.deallocate()
        current.deallocate()
    }

    /// Queues a signal and, if no drain is running, drains the mailbox on this thread. Signals
    /// from one thread keep their order; upstream's are serial. Returns false if the mailbox is
    /// closed (the signal is dropped): the caller answers as a dead machine would.
    @discardableResult
    func post(_ signal: MailboxSignal) -> Bool {
        let signal = Unchecked(signal)
        return post { ring in _ = ring.push(signal.value) }
    }

    /// Queues an input (one the actor asked for: ``ActorGate/takeInput()`` let it in).
    func post(input: Input) {
        post { ring in (inputs + ring.push(MailboxRing.Slot(kind: .input))).initialize(to: input) }
    }

    /// Pushes under the lock (growing the ring first if it is full), then drains if no drain
    /// was running: this thread takes the actor's isolation in the same critical section.
    @discardableResult
    private func post(_ push: (inout MailboxRing) -> Void) -> Bool {
        countIfRingBusy()
        let (accepted, mustDrain) = ring.withLock { ring -> (Bool, Bool) in
            guard !ring.value.closed else { return (false, false) }
            if ring.value.isFull { grow(&ring.value) }
            push(&ring.value)
            guard !ring.value.scheduled else { return (true, false) }
            ring.value.scheduled = true
            actor.executor.take()
            return (true, true)
        }
        if mustDrain { drainOnActor(actor, self) }  // after unlocking: producers keep pushing
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

    /// `StepActor.drain` called synchronously, as the isolated code it is: the caller has just
    /// taken the actor's executor (``DrainExecutor/take()``, under the ring's lock, so no other
    /// thread drains). This is what `assumeIsolated` does, minus
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
                    actor.executor.release()
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
                "\(r.count) queued, \(r.handling ? "handling one" : "idle"), drain \(r.scheduled ? "running" : "not running")\(r.closed ? ", closed" : "")"
        }
    }

    func waitUntilIdle() {
        while !ring.withLock({ $0.value.count == 0 && !$0.value.handling }) {
            usleep(20)
        }
    }
}
