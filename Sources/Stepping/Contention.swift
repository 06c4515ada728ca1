import Synchronization

/// What contention made the designs do, counted only in a *counting build*: one compiled with
/// the package trait `StepBenchCounting` (defines `STEPBENCH_COUNTING`; StepBench's bench package
/// enables it with `swift build --traits Counting`), or `-Xswiftc -DSTEPBENCH_COUNTING`.
/// In every other build ``ContentionEvent/count()`` is empty and inlined away and no counter
/// exists, so the build that is timed carries no counter.
///
/// The counters are process-wide and relaxed: take a ``Contention/snapshot()`` before and after
/// the work and subtract. Counting adds a relaxed increment where the event happens (on the
/// slow paths), which disturbs the timing it counts a little; the counting build is never timed.
@_spi(Measurement)
public enum Contention {
    /// Whether this build counts (a counting build).
    public static var isCounting: Bool {
        #if STEPBENCH_COUNTING
            true
        #else
            false
        #endif
    }

    /// Every counter now; nil in a build that does not count.
    public static func snapshot() -> ContentionCounts? {
        #if STEPBENCH_COUNTING
            let value = { (event: ContentionEvent) in
                ContentionEvent.counters[event.rawValue].value.load(ordering: .relaxed)
            }
            return ContentionCounts(
                exchangeFailures: value(.exchangeFailure), borrowYields: value(.borrowYield),
                completingYields: value(.completingYield), lockSlowPaths: value(.lockSlowPath),
                drainWakeups: value(.drainWakeup), executorJobs: value(.executorJob))
        #else
            return nil
        #endif
    }
}

/// Counts of what contention made the designs do (`Contention.snapshot()`; only a counting
/// build counts): compare-exchanges lost and retried, yields while the borrow count was full or
/// a completion was being stored (`atomic`), locks that were not free at the first try (`locked`,
/// `mutex`, `actor`'s mailbox), drains woken (`actor`), jobs enqueued on an actor's executor.
public struct ContentionCounts: Codable, Equatable, Sendable {
    /// Compare-exchanges that lost to another thread and were retried (`atomic`).
    public var exchangeFailures: UInt64
    /// Yields while the borrow count was full (`atomic`).
    public var borrowYields: UInt64
    /// Yields while another thread was storing a completion (`atomic`).
    public var completingYields: UInt64
    /// Locks that were not free at the first try (`locked`, `mutex`, `actor`'s mailbox).
    public var lockSlowPaths: UInt64
    /// Drains of the actor's mailbox that had to be woken (`actor`).
    public var drainWakeups: UInt64
    /// Jobs enqueued on an actor's executor (`actor`, `actor-stream`).
    public var executorJobs: UInt64

    /// Counts as given (every one 0 by default).
    public init(
        exchangeFailures: UInt64 = 0, borrowYields: UInt64 = 0, completingYields: UInt64 = 0,
        lockSlowPaths: UInt64 = 0, drainWakeups: UInt64 = 0, executorJobs: UInt64 = 0
    ) {
        self.exchangeFailures = exchangeFailures
        self.borrowYields = borrowYields
        self.completingYields = completingYields
        self.lockSlowPaths = lockSlowPaths
        self.drainWakeups = drainWakeups
        self.executorJobs = executorJobs
    }

    /// What happened between `start` and this reading.
    public func since(_ start: ContentionCounts) -> ContentionCounts {
        ContentionCounts(
            exchangeFailures: exchangeFailures &- start.exchangeFailures,
            borrowYields: borrowYields &- start.borrowYields,
            completingYields: completingYields &- start.completingYields,
            lockSlowPaths: lockSlowPaths &- start.lockSlowPaths, drainWakeups: drainWakeups &- start.drainWakeups,
            executorJobs: executorJobs &- start.executorJobs)
    }
}

/// The events a counting build counts.
@usableFromInline
enum ContentionEvent: Int, CaseIterable, Sendable {
    /// A compare-exchange that lost to another thread and was retried (`atomic`'s word).
    case exchangeFailure
    /// A thread yielded because the borrow count was full (`atomic`).
    case borrowYield
    /// The stepping thread yielded while another thread stored a completion (`atomic`).
    case completingYield
    /// A lock was not free at the first try and the thread had to wait for it (`locked`,
    /// `mutex`, the `actor` mailbox's ring).
    case lockSlowPath
    /// A drain of the `actor` mailbox was scheduled on a queue it woke. None since the drain runs
    /// on the signalling thread (always 0); kept so that results files keep their columns.
    case drainWakeup
    /// A job was enqueued on an actor's executor (for `actor-stream`: each time its task is
    /// resumed after waiting for the stream).
    case executorJob

    #if STEPBENCH_COUNTING
        @usableFromInline static let counters: [Counter] = allCases.map { _ in Counter() }

        @usableFromInline
        final class Counter: Sendable {
            @usableFromInline let value = Atomic<UInt64>(0)
            init() {}
        }
    #endif

    /// Counts one event (nothing in a build that does not count).
    @inlinable @inline(__always)
    func count() {
        #if STEPBENCH_COUNTING
            Self.counters[rawValue].value.add(1, ordering: .relaxed)
        #endif
    }
}
