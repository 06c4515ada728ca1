import Foundation
@preconcurrency import OpenCombine
import Stepping
import Synchronization

/// `cancel-race`: many short subscriptions; in each round `threads − 1` threads race to
/// `cancel()` the subscriber at a random point while inputs flow. Checks rule C4 every round
/// (upstream cancelled exactly once; after `cancel()` returned the stepper is called at most
/// once more). Elements = rounds; latency = from the first `cancel()` call to upstream seeing
/// its `cancel`.
enum CancelRace {
    final class Round: @unchecked Sendable {  // published through `number`
        let number = Atomic<Int>(-1)
        let finished = Atomic<Int>(0)
        var subscriber: (any SteppingSubscriber<Int, Never>)?
        var cancelAfter = 0
        let seen = Atomic<Int>(0)
        let firstCallAt = Atomic<UInt64>(UInt64.max)
        /// Set once a cancel() has returned; stepper calls that see it are counted (C4: ≤ 1).
        let returned = Atomic<Bool>(false)
        let callsAfterReturn = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
    }

    static func run(design: SteppingDesign, threads: Int, elements rounds: Int) throws -> RepetitionResult {
        precondition(threads >= 2)
        let cancellers = threads - 1
        let round = Round()
        var rng = SplitMix64(seed: 42)
        var latency = LatencyRecorder()
        for c in 0..<cancellers {
            startThread("cancel-race-\(c)") {
                var last = -1
                while !round.stop.load(ordering: .relaxed) {
                    let r = round.number.load(ordering: .acquiring)
                    guard r != last else { sched_yield(); continue }
                    last = r
                    let target = round.cancelAfter
                    let subscriber = round.subscriber!
                    var polls = 0
                    while round.seen.load(ordering: .relaxed) < target && polls < 2_000_000 { polls += 1 }
                    let t = monotonicNanoseconds()
                    storeMinimum(t, into: round.firstCallAt)
                    subscriber.cancel()
                    round.returned.store(true, ordering: .sequentiallyConsistent)
                    round.finished.add(1, ordering: .releasing)
                }
            }
        }
        defer { round.stop.store(true, ordering: .releasing) }
        var meter = Meter()
        try meter.start()
        for r in 0..<rounds {
            let upstream = CountingUpstream(count: 1_000_000)
            round.seen.store(0, ordering: .relaxed)
            round.firstCallAt.store(.max, ordering: .relaxed)
            round.finished.store(0, ordering: .relaxed)
            round.returned.store(false, ordering: .relaxed)
            round.callsAfterReturn.store(0, ordering: .relaxed)
            round.cancelAfter = Int(rng.next() % 64)
            let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
                if case .input(_, let promise) = event {
                    if round.returned.load(ordering: .sequentiallyConsistent) {
                        round.callsAfterReturn.add(1, ordering: .relaxed)
                    }
                    round.seen.add(1, ordering: .releasing)
                    promise(.more)
                }
            }
            round.subscriber = subscriber
            round.number.store(r, ordering: .releasing)
            upstream.subscribe(subscriber)  // sync designs emit here until cancelled
            try spinUntil("cancel-race \(design) round \(r): cancellers") {
                round.finished.load(ordering: .acquiring) == cancellers
            }
            SteppingDesign.waitUntilIdle(subscriber)
            let conduit = upstream.conduit!
            try verify(conduit.cancels == 1, "cancel-race \(design) round \(r): upstream cancelled \(conduit.cancels) times (C4)")
            let late = round.callsAfterReturn.load(ordering: .acquiring)
            try verify(late <= 1, "cancel-race \(design) round \(r): stepper entered \(late) times after cancel() returned (C4)")
            try verify(conduit.violations == 0, "cancel-race \(design) round \(r): demand violation")
            let called = round.firstCallAt.load(ordering: .relaxed)
            if conduit.cancelledAt >= called { latency.record(conduit.cancelledAt - called) }
            round.subscriber = nil
        }
        try meter.stop()
        return RepetitionResult(meter: meter, elements: rounds, latency: latency.summary)
    }
}

/// Lowers `atomic` to `value` if it is smaller (a compare-exchange loop).
func storeMinimum(_ value: UInt64, into atomic: borrowing Atomic<UInt64>) {
    var current = atomic.load(ordering: .relaxed)
    while value < current {
        let (exchanged, original) = atomic.compareExchange(expected: current, desired: value, ordering: .acquiringAndReleasing)
        if exchanged { return }
        current = original
    }
}
