import Foundation
@preconcurrency import OpenCombine
import Stepping
import Synchronization

/// `async-step`: two threads. An emitter thread is the upstream (it waits for demand and sends
/// the next input); the stepper hands each promise to a fulfiller thread, which calls
/// `promise(.more)`. Latency per element = from `promise(.more)` on the fulfiller to the next
/// input at the stepper. Hand-offs spin, then yield (``SpinSlot``). Floor: `floor-pingpong`.
enum AsyncStep {
    /// Upstream on its own thread: spins until there is demand, then emits.
    final class SpinUpstream: Subscription, @unchecked Sendable {
        let demand = Atomic<Int>(0)
        let cancelled = Atomic<Bool>(false)
        let violations = Atomic<Int>(0)
        func request(_ d: Subscribers.Demand) {
            let now = demand.add(d.max ?? 1, ordering: .acquiringAndReleasing).newValue
            if now > 1 || d == .none { violations.add(1, ordering: .relaxed) }
        }
        func cancel() { cancelled.store(true, ordering: .releasing) }

        /// Emits until done; returns early if cancelled or `stop()` (the scenario gave up).
        func emit(_ count: Int, to subscriber: any SteppingSubscriber<Int, Never>, stop: () -> Bool) throws {
            subscriber.receive(subscription: self)
            for value in 0..<count {
                var polls = 0
                while demand.load(ordering: .acquiring) == 0 {
                    if cancelled.load(ordering: .relaxed) || stop() { return }
                    polls += 1
                    if polls >= SpinSlot<Int>.spinLimit { sched_yield(); polls = 0 }
                }
                demand.subtract(1, ordering: .acquiringAndReleasing)
                let more = subscriber.receive(value)
                if more != .none { request(more) }
            }
            subscriber.receive(completion: .finished)
        }
    }

    /// What the stepper and the fulfiller share. The stepper's fields are touched only by
    /// stepper calls (serial, S1); `moreAt` crosses threads through the atomic.
    final class Shared: @unchecked Sendable {
        let slot = SpinSlot<StepPromise>()
        let moreAt = Atomic<UInt64>(0)
        let done = Atomic<Bool>(false)
        var latency = LatencyRecorder()
        let check = OrderCheck()
    }

    static func run(design: SteppingDesign, elements n: Int) throws -> RepetitionResult {
        let shared = Shared()
        let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
            switch event {
            case .input(let value, let promise):
                let arrived = monotonicNanoseconds()
                let asked = shared.moreAt.load(ordering: .acquiring)
                if asked != 0 { shared.latency.record(arrived &- asked) }
                shared.check.see(value)
                shared.slot.put(promise)
            case .completion:
                shared.check.finish()
            }
        }
        let upstream = SpinUpstream()
        let emitterError = Mutex<ScenarioFailure?>(nil)
        let fulfillerDone = Atomic<Bool>(false)
        let box = UncheckedBox(subscriber)
        var meter = Meter()
        try meter.start()
        startThread("async-step-fulfiller") {
            while let promise = shared.slot.take(until: { shared.done.load(ordering: .relaxed) }) {
                shared.moreAt.store(monotonicNanoseconds(), ordering: .releasing)
                promise(.more)
            }
            fulfillerDone.store(true, ordering: .releasing)
        }
        startThread("async-step-emitter") {
            do { try upstream.emit(n, to: box.value, stop: { shared.done.load(ordering: .relaxed) }) } catch {
                emitterError.withLock { $0 = error as? ScenarioFailure }
            }
        }
        defer { shared.done.store(true, ordering: .releasing) }
        try shared.check.waitFinished(what: "async-step \(design)")
        try meter.stop()
        shared.done.store(true, ordering: .releasing)
        try spinUntil("async-step \(design): fulfiller exit") { fulfillerDone.load(ordering: .acquiring) }
        if let e = emitterError.withLock({ $0 }) { throw e }
        try shared.check.verify(count: n, what: "async-step \(design)")
        try verify(upstream.violations.load(ordering: .relaxed) == 0, "async-step \(design): demand violation")
        return RepetitionResult(meter: meter, elements: n, latency: shared.latency.summary)
    }
}

/// `floor-pingpong`: the same spin-yield hand-off between two threads with nothing else:
/// thread A puts a timestamp, B takes it and records the one-way latency, then answers.
/// Per element: two hand-offs, as in `async-step`.
enum FloorPingPong {
    static func run(elements n: Int) throws -> RepetitionResult {
        let there = SpinSlot<UInt64>(), back = SpinSlot<UInt64>()
        let result = Mutex<LatencyRecorder?>(nil)
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
        }
        for _ in 0..<n {
            there.put(monotonicNanoseconds())
            guard back.take(until: { false }) != nil else { break }
        }
        try meter.stop()
        done.store(true, ordering: .releasing)
        try spinUntil("floor-pingpong: partner exit") { result.withLock { $0 != nil } }
        let latency = result.withLock { $0 }!
        try verify(latency.histogram.totalCount == UInt64(n), "floor-pingpong: \(latency.histogram.totalCount) of \(n) hand-offs")
        return RepetitionResult(meter: meter, elements: n, latency: latency.summary)
    }
}

/// Carries a subscriber (thread-safe by contract) into a thread closure.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
