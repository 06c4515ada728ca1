import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// `stale-storm`: `sync-step` on one thread while `threads − 1` other threads hammer the
/// design with stale promises (`.more` and `.cancel` on promises of earlier inputs) and
/// duplicates (`.more` again on the latest). Every element must still arrive once, in order.
/// Floor: `floor-stale-storm`, the same threads and ring around a plain subscriber.
enum StaleStorm {
    /// Every token handed out in one repetition, for the hammering threads, without a lock: the
    /// receiving thread writes slot i, then publishes `count` = i + 1 (releasing); a hammer reads
    /// `count` (acquiring) and only slots below it, which are never written again. The storage
    /// is allocated before the measured window, so publishing allocates nothing.
    final class TokenLog<Token>: @unchecked Sendable {  // slots below `count` are immutable
        private let slots: UnsafeMutablePointer<Token?>
        private let capacity: Int
        private let count = Atomic<Int>(0)

        init(capacity: Int) {
            self.capacity = capacity
            slots = .allocate(capacity: capacity)
            slots.initialize(repeating: nil, count: capacity)
        }

        deinit {
            slots.deinitialize(count: capacity)
            slots.deallocate()
        }

        /// Only the receiving thread calls this, once per input, at most `capacity` times.
        @inline(__always)
        func add(_ token: Token) {
            let i = count.load(ordering: .relaxed)
            slots[i] = token
            count.store(i + 1, ordering: .releasing)
        }

        /// Drops every token (they may hold the subscriber, which holds this log): call once no
        /// thread reads the log any more.
        func removeAll() {
            for i in 0..<count.load(ordering: .acquiring) { slots[i] = nil }
        }

        /// A token at least one input old (stale for sure), and the latest one.
        @inline(__always)
        func pick(_ r: UInt64) -> (stale: Token?, latest: Token?) {
            let n = count.load(ordering: .acquiring)
            guard n >= 2 else { return (nil, n == 1 ? slots[0] : nil) }
            let back = 1 + Int(r % UInt64(Swift.min(7, n - 1)))
            return (slots[n - 1 - back], slots[n - 1])
        }
    }

    static func run(design: SteppingDesign, threads: Int, elements n: Int) throws -> RepetitionResult {
        let log = TokenLog<StepPromise>(capacity: n)
        let check = OrderCheck()
        let stepper: @Sendable (StepEvent<Int, Never>) -> Void = { event in
            switch event {
            case .input(let value, let promise):
                check.see(value)
                log.add(promise)
                promise(.more)
            case .completion: check.finish()
            }
        }
        return try storm(
            "stale-storm \(design)", threads: threads, n: n, check: check, log: log,
            subscribe: { design.step($0, with: stepper) },  // as users call it, as sync-step
            hammer: { stale, latest, r in
                guard let stale, let latest else { return 0 }
                stale(r & 1 == 0 ? .more : .cancel)
                guard r & 6 == 0 else { return 1 }
                latest(.more)
                return 2
            })
    }

    /// The scenario's body, for a design and for its floor: `threads − 1` hammer threads call
    /// `hammer` with tokens from `log` until the stream is over; the main thread parks. `hammer`
    /// returns how many promise calls it made; their total over the stream is the repetition's
    /// ``RepetitionResult/sideEvents`` (stale calls per element: a slower stale path makes
    /// fewer of them, and so less interference, which this count shows).
    static func storm<Token>(
        _ name: String, threads: Int, n: Int, check: OrderCheck, log: TokenLog<Token>,
        subscribe: (CountingUpstream) -> AnyCancellable?, hammer: @escaping @Sendable (Token?, Token?, UInt64) -> UInt64
    ) throws -> RepetitionResult {
        let upstream = CountingUpstream(count: n)
        let stop = Atomic<Bool>(false)
        let calls = Atomic<UInt64>(0)
        let hammers = threads - 1
        let stopped = hammers > 0 ? Latch(count: hammers) : nil
        for h in 0..<hammers {
            startThread("stale-storm-\(h)") {
                var rng = SplitMix64(seed: UInt64(h + 1))
                var made: UInt64 = 0  // this thread's calls, added to `calls` once at the end
                while !stop.load(ordering: .relaxed) {
                    let r = rng.next()
                    let (stale, latest) = log.pick(r)
                    made += hammer(stale, latest, r)
                }
                calls.add(made, ordering: .relaxed)
                stopped?.countDown()
            }
        }
        defer { stop.store(true, ordering: .releasing) }
        var meter = Meter()
        try meter.start()
        let subscription = subscribe(upstream)
        defer { withExtendedLifetime(subscription) {} }
        let ended = try check.waitFinished(what: name)
        try meter.stop(endedAt: ended)
        stop.store(true, ordering: .releasing)
        try stopped?.wait(timeout: 60, what: "\(name): hammers exit")
        log.removeAll()
        try check.verify(count: n, what: "\(name) with \(hammers) hammering threads")
        try verify(
            upstream.conduit?.violations.isEmpty == true,
            "\(name): demand violation (a stale or duplicate promise acted)")
        try verify(upstream.conduit?.cancels == 0, "\(name): a stale .cancel cancelled upstream")
        return RepetitionResult(meter: meter, elements: n, sideEvents: calls.load(ordering: .relaxed))
    }
}

/// `floor-stale-storm`: stale-storm without the stepping subscriber. The same upstream, token
/// log and hammer threads; the receiving side is floor-sync's plain `.max(1)` subscriber, and a
/// hammer's "promise" is a call that reads the receiver's state (what a stale promise must at
/// least do to find out it is stale).
enum FloorStaleStorm {
    final class Receiver: Subscriber, @unchecked Sendable {  // called serially by upstream
        typealias Input = Int
        typealias Failure = Never
        let combineIdentifier = CombineIdentifier()
        let check = OrderCheck()
        let log: StaleStorm.TokenLog<Receiver>
        let latest = Atomic<Int>(0)
        init(log: StaleStorm.TokenLog<Receiver>) { self.log = log }
        func receive(subscription: any Subscription) { subscription.request(.max(1)) }
        func receive(_ input: Int) -> Subscribers.Demand {
            check.see(input)
            latest.store(input, ordering: .releasing)
            log.add(self)
            return .max(1)
        }
        func receive(completion: Subscribers.Completion<Never>) { check.finish() }
        /// A hammer's call: one acquiring load of the receiver's state, as a stale promise's check.
        @inline(never)
        func touch() { _ = latest.load(ordering: .acquiring) }
    }

    static func run(threads: Int, elements n: Int) throws -> RepetitionResult {
        let log = StaleStorm.TokenLog<Receiver>(capacity: n)
        let receiver = Receiver(log: log)
        return try StaleStorm.storm(
            "floor-stale-storm", threads: threads, n: n, check: receiver.check, log: log,
            subscribe: {
                $0.subscribe(receiver)
                return nil
            },
            hammer: { stale, latest, r in
                guard let stale, let latest else { return 0 }
                stale.touch()
                guard r & 6 == 0 else { return 1 }
                latest.touch()
                return 2
            })
    }
}

extension ScenarioDeclaration {
    static let staleStorm = ScenarioDeclaration(
        summary: "sync-step while threads−1 other threads call stale and duplicate promises",
        isFloor: false, floor: .floorStaleStorm, threads: .requested, hasLatency: false,
        elements: (quick: 100_000, full: 500_000, suite: 10_000), aloneAtOneThread: true, primary: .ratioToFloor,
        side: .staleCalls, racedRules: [.s2, .s3], roles: [.contended, .abtest]
    ) { subject, threads, elements in
        try StaleStorm.run(
            design: ScenarioDeclaration.stepping(subject, "stale-storm"), threads: threads, elements: elements)
    }

    static let floorStaleStorm = ScenarioDeclaration(
        summary: "floor: stale-storm's upstream, hammer threads and token log around a plain subscriber",
        isFloor: true, threads: .requested, hasLatency: false, aloneAtOneThread: true, primary: .nsPerElement,
        side: .staleCalls
    ) { _, threads, elements in try FloorStaleStorm.run(threads: threads, elements: elements) }
}
