import Foundation
@preconcurrency import OpenCombine
import Stepping
import Synchronization

/// `stale-storm`: `sync-step` on one thread while `threads − 1` other threads hammer the
/// design with stale promises (`.more` and `.cancel` on promises of earlier inputs) and
/// duplicates (`.more` again on the latest). Every element must still arrive once, in order.
enum StaleStorm {
    /// The last few promises handed out, for the hammering threads.
    final class PromiseRing: @unchecked Sendable {  // behind `lock`
        private let lock = NSLock()
        private var ring = [StepPromise?](repeating: nil, count: 8)
        private var count = 0
        func add(_ p: StepPromise) { lock.withLock { ring[count % 8] = p; count += 1 } }
        /// A promise at least one input old (stale for sure), and the latest one.
        func pick(_ r: UInt64) -> (stale: StepPromise?, latest: StepPromise?) {
            lock.withLock {
                guard count >= 2 else { return (nil, count == 1 ? ring[0] : nil) }
                let back = 1 + Int(r % UInt64(Swift.min(7, count - 1)))
                return (ring[(count - 1 - back) % 8], ring[(count - 1) % 8])
            }
        }
    }

    static func run(design: SteppingDesign, threads: Int, elements n: Int) throws -> RepetitionResult {
        let upstream = CountingUpstream(count: n)
        let check = OrderCheck()
        let ring = PromiseRing()
        let stop = Atomic<Bool>(false)
        let stopped = Atomic<Int>(0)
        let hammers = threads - 1
        let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
            switch event {
            case .input(let value, let promise):
                check.see(value)
                ring.add(promise)
                promise(.more)
            case .completion: check.finish()
            }
        }
        for h in 0..<hammers {
            startThread("stale-storm-\(h)") {
                var rng = SplitMix64(seed: UInt64(h + 1))
                while !stop.load(ordering: .relaxed) {
                    let r = rng.next()
                    let (stale, latest) = ring.pick(r)
                    stale?(r & 1 == 0 ? .more : .cancel)
                    if r & 6 == 0 { latest?(.more) }
                }
                stopped.add(1, ordering: .releasing)
            }
        }
        defer { stop.store(true, ordering: .releasing) }
        var meter = Meter()
        try meter.start()
        upstream.subscribe(subscriber)
        try check.waitFinished(what: "stale-storm \(design)")
        try meter.stop()
        stop.store(true, ordering: .releasing)
        try spinUntil("stale-storm: hammers exit") { stopped.load(ordering: .acquiring) == hammers }
        try check.verify(count: n, what: "stale-storm \(design) with \(hammers) hammering threads")
        try verify(upstream.conduit?.violations == 0, "stale-storm \(design): demand violation (a stale or duplicate promise acted)")
        try verify(upstream.conduit?.cancels == 0, "stale-storm \(design): a stale .cancel cancelled upstream")
        return RepetitionResult(meter: meter, elements: n)
    }
}
