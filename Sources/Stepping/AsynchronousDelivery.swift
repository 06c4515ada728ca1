/// Implemented by designs that deliver events to the stepper asynchronously (`actor`).
/// Tests and benchmarks use it to wait until everything accepted so far has been handled.
@usableFromInline
protocol AsynchronousDelivery: AnyObject {
    /// Blocks the calling thread until every signal received so far has been processed.
    /// Must not be called from the design's own executor.
    func waitUntilIdle()
    /// What the mailbox holds right now, for a watchdog's message.
    var mailboxDescription: String { get }
}
