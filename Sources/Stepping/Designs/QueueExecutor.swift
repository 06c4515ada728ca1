import Dispatch

/// A serial executor backed by a private serial `DispatchQueue`, for ``StepActor`` and
/// ``StreamStepActor``.
///
/// Why not the default (cooperative pool) executor: the pool has one thread per core, and
/// callers of a stepping subscriber — benchmark threads, test runners, upstreams — block
/// threads. On a 2-core machine two blocked callers would starve the actor that is supposed to
/// unblock them. GCD's pool grows when threads block, so the actor always gets to run.
/// For `actor-stream` it is also the drain task's executor preference, so not even the task's
/// first job waits for the cooperative pool; `actor` starts its drains on `queue` directly.
final class QueueExecutor: SerialExecutor, TaskExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        ContentionEvent.executorJob.count()
        let job = UnownedJob(job)
        let serial = asUnownedSerialExecutor()
        let task = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(isolatedTo: serial, taskExecutor: task) }
    }

    /// Lets `assumeIsolated` run actor-isolated code that the `actor` design's mailbox starts
    /// directly on `queue` (a serial queue: whatever runs on it is isolated to the actor).
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
