import Dispatch

/// A serial executor backed by a private serial `DispatchQueue`, for ``StreamStepActor``
/// (`actor-stream`).
///
/// Why not the default (cooperative pool) executor: the pool has one thread per core, and
/// callers of a stepping subscriber (benchmark threads, test runners, upstreams) block
/// threads; on a 2-core machine two blocked callers would starve the actor that is supposed to
/// unblock them. libdispatch's pool grows when threads block, but not for every queue: of 600
/// `actor-stream` subscriptions whose steppers block until all have begun, 423 to 600 began
/// within 10 s (declared, intermittent: rule R4). It is also the drain task's executor preference, so not even the
/// task's first job waits for the cooperative pool.
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

    /// Whatever runs on `queue` (a serial queue) is isolated to the actor.
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
