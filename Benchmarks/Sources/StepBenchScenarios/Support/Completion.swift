import Foundation
@_spi(StepBench) import SteppingConformance
import Synchronization

/// The stepper side of a scenario: checks inputs arrive as 0, 1, 2, … and notes completion.
/// `next` is only touched by stepper calls, which a design serialises (rule S1); the waiting
/// thread reads it after the latch says the stream is over (the latch orders the two).
public final class OrderCheck: @unchecked Sendable {
    public private(set) var next = 0
    public private(set) var outOfOrder = 0
    private let done = Latch(count: 1)

    public init() {}

    @inline(__always)
    public func see(_ value: Int) {
        if value != next { outOfOrder += 1 }
        next = value + 1
    }

    /// Called by the thread that delivers the completion: it takes the end timestamp.
    public func finish() { done.countDown() }
    public var isFinished: Bool { done.isOpen }

    /// Parks until finished (no polling: the waiter takes no core from the measured threads);
    /// returns when the finishing thread finished (monotonic ns). Throws after `timeout` seconds.
    @discardableResult
    public func waitFinished(timeout: Double = 120, what: @autoclosure () -> String) throws -> UInt64 {
        do { return try done.wait(timeout: timeout, what: what()) } catch {
            throw ScenarioFailure("\(what()): no completion within \(Int(timeout)) s (received \(next))")
        }
    }

    /// Verifies `count` inputs arrived, in order, then completion.
    public func verify(count: Int, what: String) throws {
        try StepBenchScenarios.verify(isFinished, "\(what): completion not delivered")
        try StepBenchScenarios.verify(outOfOrder == 0, "\(what): \(outOfOrder) inputs out of order")
        try StepBenchScenarios.verify(next == count, "\(what): \(next) of \(count) inputs delivered")
    }
}

/// A count-down latch whose waiter parks (a semaphore), so no harness thread polls while the
/// measured threads run. The thread that counts it down to zero records the time: end
/// timestamps are taken by the thread that finishes the work, not by the waiter's wake-up.
public final class Latch: @unchecked Sendable {  // `remaining` and `openedAt` are atomic
    private let remaining: Atomic<Int>
    private let openedAt = Atomic<UInt64>(0)
    private let semaphore = DispatchSemaphore(value: 0)

    public init(count: Int) {
        precondition(count > 0)
        remaining = Atomic(count)
    }

    public func countDown() {
        // The time is read after the decrement that opens the latch, by that thread: a time read
        // before it could be older than another thread's finish.
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            openedAt.store(monotonicNanoseconds(), ordering: .releasing)
            semaphore.signal()
        }
    }

    public var isOpen: Bool { remaining.load(ordering: .acquiring) <= 0 }

    /// Parks until the count reaches zero; returns when it did. Throws after `timeout` seconds.
    @discardableResult
    public func wait(timeout: Double, what: @autoclosure () -> String) throws -> UInt64 {
        guard semaphore.wait(timeout: .now() + timeout) == .success else {
            throw ScenarioFailure("\(what()): timed out after \(Int(timeout)) s")
        }
        semaphore.signal()  // stays open for any later wait
        return openedAt.load(ordering: .acquiring)
    }
}

/// Runs `body` on a new thread (not GCD, not the cooperative pool).
func startThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.name = name
    thread.start()
}
