import Foundation
@preconcurrency import OpenCombine
@_spi(StepBench) import SteppingConformance
import Synchronization
import TestSupport
import Testing

@testable import Stepping

/// Several threads race `.more`, duplicate and stale promises and `cancel()` against a real
/// upstream, for a bounded number of rounds; the invariants are checked after every round.
/// Each round has a watchdog: a deadlock fails with the design and round, it does not hang.
@Suite("Stress: racing threads, invariants checked every round")
struct StressTests {
    static var rounds: Int { TestSwitches.stressRounds }
    static let watchdogSeconds = 20.0

    @Test("cancel, stale and duplicate promises and .more from racing threads", arguments: testedDesigns)
    func test_stress_racingPromisesAndCancel(design: SteppingDesign) {
        var rng = SplitMix64(seed: 0xC0FFEE)
        for round in 0..<Self.rounds {
            let count = 20 + Int(rng.next() % 200)
            let cancelAfter = Int(rng.next() % UInt64(count + count / 2))  // may be past the end
            guard
                Self.runRound(
                    design: design, round: round, count: count, cancelAfter: cancelAfter,
                    kind: UpstreamKind.allCases[round % UpstreamKind.allCases.count])
            else { return }
        }
    }

    enum UpstreamKind: CaseIterable {
        /// Ours, emitting on the thread that requests (re-entrant, trampolined).
        case synchronous
        /// Ours, emitting on its own queue: a duplicate `.more` has time to do harm.
        case queued
        /// OpenCombine's Publishers.Sequence.
        case openCombine
    }

    /// One round; returns false (after recording the failure) if the watchdog fired.
    static func runRound(
        design: SteppingDesign, round: Int, count: Int, cancelAfter: Int,
        kind: UpstreamKind
    ) -> Bool {
        let label = "\(design) round \(round) (\(count) elements, cancel after \(cancelAfter), \(kind) upstream)"
        let stop = Atomic<Bool>(false)
        let probe = StepperProbe<Int> { probe, index, _ in
            if index % 5 == 0 { probe.fulfil(index, .more) }
        }
        let subscriber = SteppingConformance.Unchecked(design.subscriber(probe))
        let upstream = CountingUpstream(
            count: count, deliverOn: kind == .queued ? DispatchQueue(label: "upstream") : nil)
        let eventsWhenCancelled = Atomic<Int>(-1)
        let group = DispatchGroup()

        func spawn(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            Thread.detachNewThread {
                body(); group.leave()
            }
        }
        // The fulfiller: `.more` on the latest promise, again and again (duplicates).
        spawn {
            while !stop.load(ordering: .relaxed) {
                if probe.latestPromise != nil { probe.fulfilLatest(.more) }
            }
        }
        // The stale hammer: older promises with .more and .cancel.
        spawn {
            var rng = SplitMix64(seed: UInt64(round))
            while !stop.load(ordering: .relaxed) {
                let promises = probe.promises
                if promises.count > 1 {
                    let i = Int(rng.next() % UInt64(promises.count - 1))
                    promises[i](rng.next() % 2 == 0 ? .more : .cancel)
                }
            }
        }
        // The canceller: cancels (two or three times) once `cancelAfter` inputs were seen.
        spawn {
            while !stop.load(ordering: .relaxed) && probe.inputs.count < cancelAfter && probe.completions == 0 {
                sched_yield()
            }
            if stop.load(ordering: .relaxed) { return }
            subscriber.value.cancel()
            eventsWhenCancelled.store(probe.events.count, ordering: .sequentiallyConsistent)
            subscriber.value.cancel()
        }

        if kind == .openCombine {
            // OpenCombine's Publishers.Sequence: returned demand is not observable here.
            (0..<count).publisher.setFailureType(to: TestError.self).subscribe(subscriber.value)
        } else {
            upstream.setFailureType(to: TestError.self).subscribe(subscriber.value)
        }

        let finished = eventually(timeout: watchdogSeconds) {
            probe.completions == 1 || eventsWhenCancelled.load(ordering: .sequentiallyConsistent) >= 0
        }
        stop.store(true, ordering: .sequentiallyConsistent)
        let joined = group.wait(timeout: .now() + watchdogSeconds) == .success
        guard finished, joined else {
            Issue.record(
                "watchdog: \(label) did not finish within \(watchdogSeconds) s: deadlock or lost demand (inputs \(probe.inputs.count), events \(probe.events.count), upstream \(upstream.conduit.map { "emitted \($0.emitted), cancelled \($0.cancels)×, \($0.violations.prefix(3))" } ?? "not subscribed"), mailbox \((subscriber.value as? any AsynchronousDelivery)?.mailboxDescription ?? "none"))"
            )
            return false
        }
        settleDesign(subscriber.value)

        // S1: order, serial calls, no input while a promise is unfulfilled.
        let inputs = probe.inputs
        #expect(probe.violations.isEmpty, "\(label): \(probe.violations.prefix(3))")
        #expect(inputs == Array(0..<inputs.count), "\(label): inputs out of order")
        // C1: at most one completion; the stream finished unless it was cancelled first.
        #expect(probe.completions <= 1, "\(label)")
        let cancelledAt = eventsWhenCancelled.load(ordering: .sequentiallyConsistent)
        if cancelledAt < 0 {
            #expect(probe.events.last == .finished && inputs.count == count, "\(label): not finished")
        }
        // C4: after cancel() returned, at most one more stepper call.
        if cancelledAt >= 0 {
            #expect(probe.events.count <= cancelledAt + 1, "\(label): stepper called after cancel returned")
        }
        if kind != .openCombine, let s = upstream.conduit {
            // D2 (never more than one element outstanding), D5: recorded by the upstream as it runs
            #expect(s.violations.isEmpty, "\(label): \(s.violations.prefix(3))")
            // S2/S3 and C4: upstream cancelled at most once; every demand matched an input.
            #expect(s.cancels <= 1, "\(label): cancelled \(s.cancels) times")
            #expect(s.emitted == inputs.count || s.emitted == inputs.count + 1, "\(label)")
        }
        return true
    }
}
