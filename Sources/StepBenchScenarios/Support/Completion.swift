import Foundation
import Synchronization

/// The stepper side of a scenario: checks inputs arrive as 0, 1, 2, … and notes completion.
/// `next` is only touched by stepper calls, which a design serialises (rule S1); the main
/// thread reads it after `finished` (release/acquire) says the stream is over.
public final class OrderCheck: @unchecked Sendable {
    public private(set) var next = 0
    public private(set) var outOfOrder = 0
    private let finished = Atomic<Bool>(false)

    public init() {}

    @inline(__always)
    public func see(_ value: Int) {
        if value != next { outOfOrder += 1 }
        next = value + 1
    }

    public func finish() { finished.store(true, ordering: .releasing) }
    public var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Waits (spin, then yield, then sleep) until finished; throws after `timeout` seconds.
    public func waitFinished(timeout: Double = 120, what: @autoclosure () -> String) throws {
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        var polls = 0
        while !isFinished {
            polls += 1
            if polls > 10_000 {
                if monotonicNanoseconds() > deadline { throw ScenarioFailure("\(what()): no completion within \(Int(timeout)) s (received \(next))") }
                polls > 20_000 ? usleep(50) : sched_yield()
            }
        }
    }

    /// Verifies `count` inputs arrived, in order, then completion.
    public func verify(count: Int, what: String) throws {
        try StepBenchScenarios.verify(isFinished, "\(what): completion not delivered")
        try StepBenchScenarios.verify(outOfOrder == 0, "\(what): \(outOfOrder) inputs out of order")
        try StepBenchScenarios.verify(next == count, "\(what): \(next) of \(count) inputs delivered")
    }
}

/// Spins (then yields) until `condition` holds; throws after `timeout` seconds.
func spinUntil(timeout: Double = 60, _ what: @autoclosure () -> String, _ condition: () -> Bool) throws {
    let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
    var polls = 0
    while !condition() {
        polls += 1
        if polls > 1_000 {
            sched_yield()
            if monotonicNanoseconds() > deadline { throw ScenarioFailure("\(what()): timed out after \(Int(timeout)) s") }
        }
    }
}

/// Runs `body` on a new thread (not GCD, not the cooperative pool).
func startThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.name = name
    thread.start()
}
