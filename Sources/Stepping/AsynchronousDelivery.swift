/// Implemented by designs that deliver events to the stepper on their own executor (the
/// actors; ``SteppingDesign/Traits/Delivery/onOwnExecutor``). Tests, the conformance kit and
/// benchmarks use it to wait until everything accepted so far has been handled.
public protocol AsynchronousDelivery: AnyObject {
    /// Blocks the calling thread until every signal received so far has been processed.
    /// Must not be called from the design's own executor.
    func waitUntilIdle()
    /// What the mailbox holds right now, for a watchdog's message.
    var mailboxDescription: String { get }
}
