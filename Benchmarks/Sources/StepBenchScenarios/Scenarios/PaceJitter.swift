import Foundation
@preconcurrency import OpenCombine
import OpenCombineDispatch
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// `pace-jitter`: `pace` at 1 ms over a few hundred elements on OpenCombine's DispatchQueue
/// scheduler. Latency = how late each output is against its ideal time (the previous output
/// + 1 ms): the scheduling jitter a user of `pace` sees. Floor: `floor-pace`, the scheduler's
/// own lateness for the same chain of 1 ms timers with no stepping subscriber.
enum PaceJitter {
    static let interval: UInt64 = 1_000_000

    static func run(design: SteppingDesign, elements n: Int) throws -> RepetitionResult {
        try measure("pace-jitter \(design)", n: n) { queue, paced in
            (0..<n).publisher.pace(
                .nanoseconds(Int(interval)), scheduler: queue.ocombine, subject: paced, design: design)
        }
    }

    /// The scenario's body: `start` begins sending 0..<n through `paced` at 1 ms on `queue`; a sink
    /// records each output's time; the main thread parks until the completion.
    static func measure(
        _ name: String, n: Int,
        start: (DispatchQueue, PassthroughSubject<Int, Never>) -> AnyCancellable
    ) throws -> RepetitionResult {
        let queue = DispatchQueue(label: "pace-jitter")
        let paced = PassthroughSubject<Int, Never>()
        let times = Mutex<[UInt64]>([])
        let check = OrderCheck()
        let sink = paced.sink(
            receiveCompletion: { _ in check.finish() },
            receiveValue: { v in
                let now = monotonicNanoseconds()
                check.see(v)
                times.withLock { $0.append(now) }
            })
        var meter = Meter()
        try meter.start()
        let pacing = start(queue, paced)
        let ended = try check.waitFinished(timeout: Double(n) * 0.01 + 30, what: name)
        try meter.stop(endedAt: ended)
        withExtendedLifetime((sink, pacing)) {}
        try check.verify(count: n, what: name)
        let t = times.withLock { $0 }
        var latency = LatencyRecorder()
        for (previous, current) in zip(t, t.dropFirst()) {
            try verify(
                current - previous >= interval - interval / 100,
                "\(name): outputs \(current - previous) ns apart, interval is 1 ms")
            latency.record(current - previous - Swift.min(current - previous, interval))
        }
        return RepetitionResult(meter: meter, elements: n, latency: latency.summary)
    }
}

/// `floor-pace`: the same subject, sink and DispatchQueue scheduler, with the chain of 1 ms
/// timers driven directly (send, then schedule the next after 1 ms): the lateness the scheduler
/// itself adds, which no design can avoid.
enum FloorPace {
    static func run(elements n: Int) throws -> RepetitionResult {
        try PaceJitter.measure("floor-pace", n: n) { queue, paced in
            let subject = Unchecked(paced)  // only touched from `queue`
            @Sendable func tick(_ i: Int) {
                guard i < n else { subject.value.send(completion: .finished); return }
                subject.value.send(i)
                let scheduler = queue.ocombine
                scheduler.schedule(after: scheduler.now.advanced(by: .nanoseconds(Int(PaceJitter.interval)))) {
                    tick(i + 1)
                }
            }
            queue.async { tick(0) }
            return AnyCancellable {}
        }
    }
}

extension ScenarioDeclaration {
    static let paceJitter = ScenarioDeclaration(
        summary: "pace at 1 ms on the DispatchQueue scheduler; latency = lateness of each output",
        // 1 ms apart: 0.1 s a repetition, whatever the design
        isFloor: false, floor: .floorPace, threads: .one, hasLatency: true,
        elements: (quick: 100, full: 500, suite: 20), timersSetThePace: true, primary: .latencyP50
    ) { subject, _, elements in
        try PaceJitter.run(design: ScenarioDeclaration.stepping(subject, "pace-jitter"), elements: elements)
    }

    static let floorPace = ScenarioDeclaration(
        summary: "floor: the same chain of 1 ms timers on the DispatchQueue scheduler, no stepping",
        isFloor: true, threads: .one, hasLatency: true, timersSetThePace: true, primary: .latencyP50
    ) { _, _, elements in try FloorPace.run(elements: elements) }
}
