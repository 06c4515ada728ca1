import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// `async-step`: two threads. An emitter thread is the upstream (it waits for demand and sends
/// the next input); the stepper hands each promise to a fulfiller thread, which calls
/// `promise(.more)`. Latency per element = from the fulfiller's `.more` to the next input at the
/// stepper. Hand-offs spin, then yield (``HandOff/spinYield``); the waiting main thread parks.
/// Floor: `floor-async`, the very same threads and hand-offs with a plain subscriber whose
/// "promise" is the fulfiller calling `request(.max(1))` itself.
///
/// `async-park` is the same scenario with hand-offs that park (``HandOff/park``): the emitter
/// sleeps until demand arrives and the fulfiller until a promise does, as a `pace` on a
/// `DispatchQueue` would. The spinning variant is right for designs that run the stepper on the
/// caller's thread; a design that hands work to its own executor (the actors) needs a third
/// thread, which two spinning threads on a two-core machine keep waiting for a yield, so those
/// designs are read here. Floor: `floor-async-park`.
enum AsyncStep {
    /// Upstream on its own thread: waits for demand (spinning, or parked until `request`
    /// wakes it, as its ``HandOff`` says), then emits.
    final class HandOffUpstream: Subscription, @unchecked Sendable {
        let handOff: HandOff
        let demand = Atomic<Int>(0)
        let cancelled = Atomic<Bool>(false)
        let violations = Atomic<Int>(0)
        private let demanded = DispatchSemaphore(value: 0)
        init(_ handOff: HandOff) { self.handOff = handOff }
        func request(_ d: Subscribers.Demand) {
            let now = demand.add(d.max ?? 1, ordering: .acquiringAndReleasing).newValue
            if now > 1 || d == .none { violations.add(1, ordering: .relaxed) }
            if handOff == .park { demanded.signal() }
        }
        func cancel() {
            cancelled.store(true, ordering: .releasing)
            if handOff == .park { demanded.signal() }
        }

        /// Waits until there is demand (true) or the stream is to stop (false).
        @inline(__always)
        private func awaitDemand(stop: () -> Bool) -> Bool {
            var stopped = false  // cancel and stop are checked at every poll or wake-up
            func ready() -> Bool {
                if demand.load(ordering: .acquiring) != 0 { return true }
                stopped = cancelled.load(ordering: .relaxed) || stop()
                return stopped
            }
            switch handOff {
            case .spinYield: _ = SpinWait.until(ready)
            case .park:
                // A signal left over from demand that was already taken only costs a re-check.
                while !ready() { _ = demanded.wait(timeout: .now() + .milliseconds(10)) }
            }
            return !stopped
        }

        /// Emits until done; returns early if cancelled or `stop()` (the scenario gave up).
        func emit<S: Subscriber>(_ count: Int, to subscriber: S, stop: () -> Bool)
        where S.Input == Int, S.Failure == Never {
            subscriber.receive(subscription: self)
            for value in 0..<count {
                guard awaitDemand(stop: stop) else { return }
                demand.subtract(1, ordering: .acquiringAndReleasing)
                let more = subscriber.receive(value)
                if more != .none { request(more) }
            }
            subscriber.receive(completion: .finished)
        }
    }

    /// What the receiving side and the fulfiller share. The receiving side's fields are touched
    /// only by its calls (serial: rule S1, or upstream's serial signals for the floor); `moreAt`
    /// crosses threads through the atomic.
    final class Shared<Token>: @unchecked Sendable {
        let slot: HandOffSlot<Token>
        let moreAt = Atomic<UInt64>(0)
        let done = Atomic<Bool>(false)
        var latency = LatencyRecorder()
        let check = OrderCheck()
        init(_ handOff: HandOff) { slot = HandOffSlot(handOff) }

        /// On the receiving side, per input: latency since the fulfiller's `.more`, order.
        @inline(__always)
        func arrived(_ value: Int, token: Token) {
            let now = monotonicNanoseconds()
            let asked = moreAt.load(ordering: .acquiring)
            if asked != 0 { latency.record(now &- asked) }
            check.see(value)
            slot.put(token)
        }
    }

    static func run(design: SteppingDesign, handOff: HandOff, elements n: Int) throws -> RepetitionResult {
        let shared = Shared<StepPromise>(handOff)
        let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
            switch event {
            case .input(let value, let promise): shared.arrived(value, token: promise)
            case .completion: shared.check.finish()
            }
        }
        return try relay(
            "\(handOff == .park ? "async-park" : "async-step") \(design)", shared, n,
            subscriber: Unchecked(AnySubscriber(subscriber)), upstream: HandOffUpstream(handOff)
        ) {
            promise, _ in promise(.more)
        }
    }

    /// The scenario's body, for a design and for its floor: an emitter thread runs `upstream`
    /// into `subscriber` (type-erased alike for both), a fulfiller thread takes each token and
    /// calls `fulfil`.
    static func relay<Token>(
        _ name: String, _ shared: Shared<Token>, _ n: Int, subscriber: Unchecked<AnySubscriber<Int, Never>>,
        upstream: HandOffUpstream, fulfil: @escaping @Sendable (Token, HandOffUpstream) -> Void
    ) throws -> RepetitionResult {
        let fulfillerDone = Latch(count: 1)
        var meter = Meter()
        try meter.start()
        startThread("async-step-fulfiller") {
            while let token = shared.slot.take(until: { shared.done.load(ordering: .relaxed) }) {
                shared.moreAt.store(monotonicNanoseconds(), ordering: .releasing)
                fulfil(token, upstream)
            }
            fulfillerDone.countDown()
        }
        startThread("async-step-emitter") {
            upstream.emit(n, to: subscriber.value, stop: { shared.done.load(ordering: .relaxed) })
        }
        defer { shared.done.store(true, ordering: .releasing) }
        let ended = try shared.check.waitFinished(what: name)
        try meter.stop(endedAt: ended)
        shared.done.store(true, ordering: .releasing)
        try fulfillerDone.wait(timeout: 60, what: "\(name): fulfiller exit")
        try shared.check.verify(count: n, what: name)
        try verify(upstream.violations.load(ordering: .relaxed) == 0, "\(name): demand violation")
        return RepetitionResult(meter: meter, elements: n, latency: shared.latency.summary)
    }
}

/// `floor-async` (`floor-async-park`): async-step (async-park) without the stepping subscriber.
/// The same emitter, fulfiller, hand-off slot, timestamps and parked waiter; the receiving side
/// is a plain subscriber that hands a token to the fulfiller, which asks upstream for `.max(1)`
/// itself.
enum FloorAsync {
    final class Receiver: Subscriber, @unchecked Sendable {  // called serially by the emitter
        typealias Input = Int
        typealias Failure = Never
        let combineIdentifier = CombineIdentifier()
        let shared: AsyncStep.Shared<Bool>
        init(_ shared: AsyncStep.Shared<Bool>) { self.shared = shared }
        func receive(subscription: any Subscription) { subscription.request(.max(1)) }
        func receive(_ input: Int) -> Subscribers.Demand {
            shared.arrived(input, token: true)
            return .none
        }
        func receive(completion: Subscribers.Completion<Never>) { shared.check.finish() }
    }

    static func run(handOff: HandOff, elements n: Int) throws -> RepetitionResult {
        let shared = AsyncStep.Shared<Bool>(handOff)
        return try AsyncStep.relay(
            handOff == .park ? "floor-async-park" : "floor-async", shared, n,
            subscriber: Unchecked(AnySubscriber(Receiver(shared))), upstream: AsyncStep.HandOffUpstream(handOff)
        ) { _, upstream in upstream.request(.max(1)) }
    }
}

/// `floor-pingpong`: the same spin-yield hand-off between two threads with nothing else:
/// thread A puts a timestamp, B takes it and records the one-way latency, then answers.
/// Per element: two hand-offs, as in `async-step`. The physical limit of the hand-off itself.
enum FloorPingPong {
    static func run(elements n: Int) throws -> RepetitionResult {
        let there = SpinSlot<UInt64>(), back = SpinSlot<UInt64>()
        let result = Mutex<LatencyRecorder?>(nil)
        let partnerDone = Latch(count: 1)
        let done = Atomic<Bool>(false)
        var meter = Meter()
        try meter.start()
        startThread("pingpong-b") {
            var latency = LatencyRecorder()
            for _ in 0..<n {
                guard let sent = there.take(until: { done.load(ordering: .relaxed) }) else { break }
                latency.record(monotonicNanoseconds() &- sent)
                back.put(monotonicNanoseconds())
            }
            result.withLock { $0 = latency }
            partnerDone.countDown()
        }
        for _ in 0..<n {
            there.put(monotonicNanoseconds())
            guard back.take(until: { false }) != nil else { break }
        }
        try meter.stop()
        done.store(true, ordering: .releasing)
        try partnerDone.wait(timeout: 60, what: "floor-pingpong: partner exit")
        let latency = result.withLock { $0 }!
        try verify(
            latency.histogram.totalCount == UInt64(n),
            "floor-pingpong: \(latency.histogram.totalCount) of \(n) hand-offs")
        return RepetitionResult(meter: meter, elements: n, latency: latency.summary)
    }
}

extension ScenarioDeclaration {
    static let asyncStep = ScenarioDeclaration(
        summary:
            "promise fulfilled on a second thread (spin-yield hand-offs, waiter parked); latency .more → next input",
        isFloor: false, floor: .floorAsync, threads: .two, hasLatency: true,
        elements: (quick: 20_000, full: 100_000, suite: 2_000), racesTransitions: true, primary: .ratioToFloor,
        roles: [.crossThread, .abtest]
    ) { subject, _, elements in
        try AsyncStep.run(
            design: ScenarioDeclaration.stepping(subject, "async-step"), handOff: .spinYield, elements: elements)
    }

    static let asyncPark = ScenarioDeclaration(
        summary:
            "async-step with hand-offs that park (as a pace on a DispatchQueue): the asynchronous designs' verdict",
        // every hand-off wakes a thread: tens of µs each; the two allocation counters differ by a
        // few allocations per run
        isFloor: false, floor: .floorAsyncPark, threads: .two, hasLatency: true,
        elements: (quick: 2_000, full: 10_000, suite: 1_000), racesTransitions: true, primary: .ratioToFloor,
        roles: [.asynchronousVerdict, .abtest]
    ) { subject, _, elements in
        try AsyncStep.run(
            design: ScenarioDeclaration.stepping(subject, "async-park"), handOff: .park, elements: elements)
    }

    static let floorPingPong = ScenarioDeclaration(
        summary: "floor: a raw two-thread ping-pong with async-step's spin-yield hand-off (the hand-off alone)",
        isFloor: true, threads: .two, hasLatency: true, elements: (quick: 20_000, full: 100_000, suite: 2_000),
        primary: .latencyP50
    ) { _, _, elements in try FloorPingPong.run(elements: elements) }

    static let floorAsync = ScenarioDeclaration(
        summary: "floor: async-step's threads, hand-offs and waiter around a plain .max(1) subscriber",
        isFloor: true, threads: .two, hasLatency: true, primary: .nsPerElement
    ) { _, _, elements in try FloorAsync.run(handOff: .spinYield, elements: elements) }

    static let floorAsyncPark = ScenarioDeclaration(
        summary: "floor: async-park's threads, parking hand-offs and waiter around a plain .max(1) subscriber",
        isFloor: true, threads: .two, hasLatency: true, primary: .nsPerElement
    ) { _, _, elements in try FloorAsync.run(handOff: .park, elements: elements) }
}
