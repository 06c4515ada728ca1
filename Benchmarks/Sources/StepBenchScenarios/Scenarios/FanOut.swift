import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// `fan-out`: N independent `sync-step` pipelines on N threads at once, a fixed number of
/// elements each. Nothing is shared between pipelines, so any slow-down with N shows shared
/// state in a design (a global lock, false sharing, a shared executor) — or N above the cores.
/// Reports the aggregate (all elements over the whole window) and, per repetition, each
/// pipeline's own time (per-thread ns/element). The main thread parks while they run; the last
/// pipeline to finish takes the end timestamp. Floor: `floor-fan-out`, the same pipelines of
/// floor-sync's plain subscriber.
enum FanOut {
    static func run(design: SteppingDesign, threads: Int, elements n: Int) throws -> RepetitionResult {
        try pipelines("fan-out \(design)", threads: threads, n: n) { upstream, check in
            // Through `step`, as sync-step: a design that subscribes itself meets the upstream.
            design.step(upstream) { event in
                switch event {
                case .input(let value, let promise): check.see(value); promise(.more)
                case .completion: check.finish()
                }
            }
        }
    }

    /// `threads` pipelines, each `subscribe(upstream, check)` on its own thread (what it returns
    /// is kept until the pipeline verified); they start together (parked until the window opens)
    /// and each verifies its own outcome.
    static func pipelines(
        _ name: String, threads: Int, n: Int,
        subscribe: @escaping @Sendable (CountingUpstream, OrderCheck) -> AnyCancellable?
    ) throws -> RepetitionResult {
        let go = DispatchSemaphore(value: 0)
        let ready = Latch(count: threads)
        let done = Latch(count: threads)
        let failures = Mutex<[String]>([])
        let elapsed = Mutex<[UInt64]>(Array(repeating: 0, count: threads))
        let finishedAt = Atomic<UInt64>(0)
        for t in 0..<threads {
            startThread("\(name)-\(t)") {
                let upstream = CountingUpstream(count: n)
                let check = OrderCheck()
                ready.countDown()  // set up, outside the window
                go.wait()
                let started = monotonicNanoseconds()
                let subscription = subscribe(upstream, check)
                defer { withExtendedLifetime(subscription) {} }
                do {
                    let ended = try check.waitFinished(what: "\(name) pipeline \(t)")
                    elapsed.withLock { $0[t] = ended &- started }
                    storeMaximum(ended, into: finishedAt)
                    try check.verify(count: n, what: "\(name) pipeline \(t)")
                    try verify(upstream.conduit?.violations.isEmpty == true, "\(name) pipeline \(t): demand violation")
                    try verify(upstream.conduit?.cancels == 0, "\(name) pipeline \(t): upstream cancelled")
                } catch { failures.withLock { $0.append("\(error)") } }
                done.countDown()
            }
        }
        try ready.wait(timeout: 60, what: "\(name): pipelines set up")
        var meter = Meter()
        try meter.start()
        for _ in 0..<threads { go.signal() }
        try done.wait(timeout: 300, what: "\(name): pipelines")
        // The window closes when the last pipeline completed (its completion's own time), not
        // when it had also verified its outcome.
        try meter.stop(endedAt: finishedAt.load(ordering: .acquiring))
        if let first = failures.withLock({ $0.first }) { throw ScenarioFailure(first) }
        var result = RepetitionResult(meter: meter, elements: n * threads)
        result.threadNanoseconds = elapsed.withLock { $0 }
        return result
    }
}

/// `floor-fan-out`: fan-out without the stepping subscriber: the same pipelines, threads and
/// parked waiter, each pipeline floor-sync's upstream into a plain `.max(1)` subscriber.
enum FloorFanOut {
    static func run(threads: Int, elements n: Int) throws -> RepetitionResult {
        try FanOut.pipelines("floor-fan-out", threads: threads, n: n) { upstream, check in
            upstream.subscribe(FloorSync.MaxOneSink(check: check))
            return nil
        }
    }
}

extension ScenarioDeclaration {
    static let fanOut = ScenarioDeclaration(
        summary:
            "N independent sync-step pipelines on N threads; aggregate and per-thread throughput; elements per pipeline",
        isFloor: false, floor: .floorFanOut, threads: .requested, hasLatency: false,
        elements: (quick: 100_000, full: 500_000, suite: 10_000), throughputScalesWithThreads: true,
        aloneAtOneThread: true, primary: .ratioToFloor, roles: [.contended]
    ) { subject, threads, elements in
        try FanOut.run(design: ScenarioDeclaration.stepping(subject, "fan-out"), threads: threads, elements: elements)
    }

    static let floorFanOut = ScenarioDeclaration(
        summary: "floor: fan-out's N pipelines of floor-sync (same threads, same waiter)",
        isFloor: true, threads: .requested, hasLatency: false, throughputScalesWithThreads: true,
        aloneAtOneThread: true, primary: .nsPerElement
    ) { _, threads, elements in try FloorFanOut.run(threads: threads, elements: elements) }
}
