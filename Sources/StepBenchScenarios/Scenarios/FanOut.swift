import Foundation
@preconcurrency import OpenCombine
import Stepping
import Synchronization

/// `fan-out`: N independent `sync-step` pipelines on N threads at once; aggregate throughput.
/// Nothing is shared between pipelines, so any slow-down with N shows shared state in a
/// design (a global lock, false sharing, a shared executor). Elements = per pipeline.
enum FanOut {
    static func run(design: SteppingDesign, threads: Int, elements n: Int) throws -> RepetitionResult {
        let go = Atomic<Bool>(false)
        let ready = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        for t in 0..<threads {
            startThread("fan-out-\(t)") {
                let upstream = CountingUpstream(count: n)
                let check = OrderCheck()
                let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
                    switch event {
                    case .input(let value, let promise): check.see(value); promise(.more)
                    case .completion: check.finish()
                    }
                }
                ready.add(1, ordering: .releasing)
                while !go.load(ordering: .acquiring) { sched_yield() }
                upstream.subscribe(subscriber)
                do {
                    try check.waitFinished(what: "fan-out \(design) pipeline \(t)")
                    try check.verify(count: n, what: "fan-out \(design) pipeline \(t)")
                    try verify(upstream.conduit?.violations == 0, "fan-out \(design) pipeline \(t): demand violation")
                    try verify(upstream.conduit?.cancels == 0, "fan-out \(design) pipeline \(t): upstream cancelled")
                } catch { failures.withLock { $0.append("\(error)") } }
                done.add(1, ordering: .releasing)
            }
        }
        try spinUntil("fan-out: threads ready") { ready.load(ordering: .acquiring) == threads }
        var meter = Meter()
        try meter.start()
        go.store(true, ordering: .releasing)
        try spinUntil(timeout: 300, "fan-out \(design): pipelines") { done.load(ordering: .acquiring) == threads }
        try meter.stop()
        if let first = failures.withLock({ $0.first }) { throw ScenarioFailure(first) }
        return RepetitionResult(meter: meter, elements: n * threads)
    }
}
