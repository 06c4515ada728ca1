import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// `cancel-race`: many short subscriptions; in each round `threads − 1` threads race to
/// `cancel()` the subscriber at a random point while inputs flow. Checks rule C4 every round
/// (upstream cancelled exactly once; after `cancel()` returned the stepper is called at most
/// once more, unless the design declares C4 broken: then the late calls are its known issue).
/// Elements = rounds; latency = from the first `cancel()` call to upstream seeing its `cancel`
/// (the headline: a round's time is mostly the harness's wake-ups and checks);
/// side events = inputs delivered over all rounds (inputs per round: how far the race let the
/// stream run). Between rounds the cancellers park, and the main thread parks while they race.
/// Floor: `floor-cancel-race`, the same rounds and cancellers around a plain cancellable
/// subscriber.
enum CancelRace {
    final class Round: @unchecked Sendable {  // published through each canceller's semaphore
        var target: (any Cancellable)?
        var cancelAfter = 0
        var finished = Latch(count: 1)
        let seen = Atomic<Int>(0)
        let firstCallAt = Atomic<UInt64>(UInt64.max)
        /// Set once a cancel() has returned; calls that see it are counted (C4: ≤ 1).
        let returned = Atomic<Bool>(false)
        let callsAfterReturn = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)

        /// What the receiving side does per input (stepper or plain subscriber).
        @inline(__always)
        func input() {
            if returned.load(ordering: .sequentiallyConsistent) { callsAfterReturn.add(1, ordering: .relaxed) }
            seen.add(1, ordering: .releasing)
        }
    }

    static func run(design: SteppingDesign, threads: Int, elements rounds: Int) throws -> RepetitionResult {
        let lateCallsAllowed = design.traits.knownIssue(.c4) != nil ? Int.max : 1
        return try race("cancel-race \(design)", threads: threads, rounds: rounds, lateCallsAllowed: lateCallsAllowed) {
            round, upstream in
            let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
                if case .input(_, let promise) = event {
                    round.input()
                    promise(.more)
                }
            }
            round.target = subscriber
            return { upstream.subscribe(subscriber) }  // sync designs emit here until cancelled
        }
    }

    /// The scenario's body: per round, `prepare` makes the subscriber (sets `round.target`) and
    /// returns how to subscribe it; the cancellers race to cancel it. `lateCallsAllowed`: stepper
    /// calls allowed after `cancel()` returned (C4: one).
    static func race(
        _ name: String, threads: Int, rounds: Int, lateCallsAllowed: Int = 1,
        prepare: (Round, CountingUpstream) -> () -> Void
    ) throws -> RepetitionResult {
        precondition(threads >= 2)
        let cancellers = threads - 1
        let round = Round()
        let wake = (0..<cancellers).map { _ in DispatchSemaphore(value: 0) }
        var rng = SplitMix64(seed: 42)
        var latency = LatencyRecorder()
        var inputs: UInt64 = 0
        for c in 0..<cancellers {
            startThread("cancel-race-\(c)") {
                while true {
                    wake[c].wait()
                    if round.stop.load(ordering: .acquiring) { return }
                    let target = round.cancelAfter
                    var polls = 0
                    while round.seen.load(ordering: .relaxed) < target && polls < 2_000_000 { polls += 1 }
                    storeMinimum(monotonicNanoseconds(), into: round.firstCallAt)
                    round.target!.cancel()
                    round.returned.store(true, ordering: .sequentiallyConsistent)
                    round.finished.countDown()
                }
            }
        }
        defer {
            round.stop.store(true, ordering: .releasing)
            for w in wake { w.signal() }
        }
        var meter = Meter()
        try meter.start()
        for r in 0..<rounds {
            let upstream = CountingUpstream(count: 1_000_000)
            round.seen.store(0, ordering: .relaxed)
            round.firstCallAt.store(.max, ordering: .relaxed)
            round.returned.store(false, ordering: .relaxed)
            round.callsAfterReturn.store(0, ordering: .relaxed)
            round.cancelAfter = Int(rng.next() % 64)
            round.finished = Latch(count: cancellers)
            let subscribe = prepare(round, upstream)
            for w in wake { w.signal() }
            subscribe()
            try round.finished.wait(timeout: 60, what: "\(name) round \(r): cancellers")
            let target = round.target!
            SteppingDesign.waitUntilIdle(target as AnyObject)
            let conduit = upstream.conduit!
            try verify(conduit.cancels == 1, "\(name) round \(r): upstream cancelled \(conduit.cancels) times (C4)")
            let late = round.callsAfterReturn.load(ordering: .acquiring)
            try verify(
                late <= lateCallsAllowed,
                "\(name) round \(r): stepper entered \(late) times after cancel() returned (C4)")
            try verify(conduit.violations.isEmpty, "\(name) round \(r): demand violation")
            let called = round.firstCallAt.load(ordering: .relaxed)
            if conduit.cancelledAt >= called { latency.record(conduit.cancelledAt - called) }
            inputs += UInt64(round.seen.load(ordering: .relaxed))
            round.target = nil
        }
        try meter.stop()
        return RepetitionResult(meter: meter, elements: rounds, latency: latency.summary, sideEvents: inputs)
    }
}

/// `floor-cancel-race`: cancel-race without the stepping subscriber: the same rounds, upstream
/// and racing cancellers around a plain subscriber that returns `.max(1)` and cancels its
/// subscription once (an atomic exchange) when cancelled.
enum FloorCancelRace {
    final class CancellableSink: Subscriber, Cancellable, @unchecked Sendable {  // `subscription` published by `state`
        typealias Input = Int
        typealias Failure = Never
        let combineIdentifier = CombineIdentifier()
        let round: CancelRace.Round
        private var subscription: (any Subscription)?
        /// 0: no subscription yet, 1: subscribed, 2: cancelled. A cancel may race the subscription.
        private let state = Atomic<Int>(0)
        init(round: CancelRace.Round) { self.round = round }
        func receive(subscription: any Subscription) {
            self.subscription = subscription
            if state.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged {
                subscription.request(.max(1))
            } else {
                subscription.cancel()  // cancelled before it arrived
            }
        }
        func receive(_ input: Int) -> Subscribers.Demand {
            guard state.load(ordering: .acquiring) == 1 else { return .none }
            round.input()
            return .max(1)
        }
        func receive(completion: Subscribers.Completion<Never>) {}
        func cancel() {
            if state.exchange(2, ordering: .acquiringAndReleasing) == 1 { subscription?.cancel() }
        }
    }

    static func run(threads: Int, elements rounds: Int) throws -> RepetitionResult {
        try CancelRace.race("floor-cancel-race", threads: threads, rounds: rounds) { round, upstream in
            let sink = CancellableSink(round: round)
            round.target = sink
            return { upstream.subscribe(sink) }
        }
    }
}

extension ScenarioDeclaration {
    static let cancelRace = ScenarioDeclaration(
        summary: "short subscriptions cancelled by threads−1 racing threads; checks C4 every round; elements = rounds",
        isFloor: false, floor: .floorCancelRace, threads: .racing, hasLatency: true,
        elements: (quick: 300, full: 1_500, suite: 50), unit: "round", racesTransitions: true,
        allocationTolerance: 0.5, primary: .latencyP50, side: .inputsPerRound, racedRules: [.c4],
        roles: [.cancel, .abtest]
    ) { subject, threads, elements in
        try CancelRace.run(
            design: ScenarioDeclaration.stepping(subject, "cancel-race"), threads: threads, elements: elements)
    }

    static let floorCancelRace = ScenarioDeclaration(
        summary: "floor: cancel-race's rounds and racing cancellers around a plain cancellable subscriber",
        isFloor: true, threads: .racing, hasLatency: true, unit: "round", allocationTolerance: 0.5,
        primary: .latencyP50, side: .inputsPerRound
    ) { _, threads, elements in try FloorCancelRace.run(threads: threads, elements: elements) }
}
