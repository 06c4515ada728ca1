import Foundation
import Synchronization

/// The `actor` design's executor: the actor's isolation belongs to whichever thread is draining
/// its mailbox. A thread takes it (``take()``) when its signal wins the mailbox's drain (a
/// compare-exchange of the mailbox's state), and gives it back (``release()``) before it lets
/// the drain go, when it finds the mailbox empty; so at most one thread runs the actor's code at
/// a time, as a serial executor must, and the stepper runs on the draining thread (no hop, no
/// wake-up). A drain that has handled its share of other threads' signals hands the isolation
/// over (``handOver()``, ``takeOver()``) to a Dispatch worker that goes on draining, and its
/// caller returns.
///
/// The actor is entered only through its mailbox: ``StepActor`` has no asynchronous methods, so
/// no job is ever enqueued here, and ``enqueue(_:)`` traps to keep that true. `checkIsolated`
/// (which `preconditionIsolated` and `assumeIsolated` call) passes on the draining thread.
final class DrainExecutor: SerialExecutor {
    /// The draining thread's id (``currentThreadID``), 0 when no drain runs.
    private let owner = Atomic<UInt>(0)

    /// Takes the actor's isolation for this thread; the caller has just won the mailbox's drain.
    func take() {
        owner.store(Self.currentThreadID, ordering: .relaxed)
    }

    /// Gives the isolation back; the caller found the mailbox empty and still holds its drain.
    func release() {
        owner.store(0, ordering: .relaxed)
    }

    /// Hands the isolation over to the thread that will ``takeOver()`` (the drain goes on there;
    /// see ``StepMailbox/handOff()``): what this thread did as the actor is published to it.
    func handOver() {
        owner.store(0, ordering: .releasing)
    }

    /// Takes over the isolation handed over by ``handOver()``, seeing what its thread did.
    func takeOver() {
        _ = owner.exchange(Self.currentThreadID, ordering: .acquiringAndReleasing)
    }

    /// Whether this thread is draining the mailbox (holds the actor's isolation). Only the
    /// draining thread ever finds its own id here: it alone stores it, and stores 0 before any
    /// other thread may take the isolation.
    @inline(__always)
    var isHeldByCurrentThread: Bool {
        owner.load(ordering: .relaxed) == Self.currentThreadID
    }

    func enqueue(_ job: consuming ExecutorJob) {
        preconditionFailure("StepActor is entered only through its mailbox: nothing enqueues jobs on it")
    }

    func checkIsolated() {
        precondition(
            isHeldByCurrentThread,
            "the actor design's code runs only on the thread draining its mailbox")
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// This thread's id, never 0.
    static var currentThreadID: UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }
}
