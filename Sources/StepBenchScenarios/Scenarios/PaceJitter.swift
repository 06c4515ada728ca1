import Foundation
@preconcurrency import OpenCombine
import OpenCombineDispatch
import Stepping
import Synchronization

/// `pace-jitter`: `pace` at 1 ms over a few hundred elements on OpenCombine's DispatchQueue
/// scheduler. Latency = how late each output is against its ideal time (the previous output
/// + 1 ms): the scheduling jitter a user of `pace` sees.
enum PaceJitter {
    static let interval: UInt64 = 1_000_000

    static func run(design: SteppingDesign, elements n: Int) throws -> RepetitionResult {
        let queue = DispatchQueue(label: "pace-jitter")
        let paced = PassthroughSubject<Int, Never>()
        let times = Mutex<[UInt64]>([])
        let check = OrderCheck()
        let sink = paced.sink(receiveCompletion: { _ in check.finish() }, receiveValue: { v in
            let now = monotonicNanoseconds()
            check.see(v)
            times.withLock { $0.append(now) }
        })
        var meter = Meter()
        try meter.start()
        let pacing = (0..<n).publisher.pace(.nanoseconds(Int(interval)), scheduler: queue.ocombine,
                                            subject: paced, design: design)
        try check.waitFinished(timeout: Double(n) * 0.01 + 30, what: "pace-jitter \(design)")
        try meter.stop()
        withExtendedLifetime((sink, pacing)) {}
        try check.verify(count: n, what: "pace-jitter \(design)")
        let t = times.withLock { $0 }
        var latency = LatencyRecorder()
        for (previous, current) in zip(t, t.dropFirst()) {
            try verify(current - previous >= interval - interval / 100,
                       "pace-jitter \(design): outputs \(current - previous) ns apart, interval is 1 ms")
            latency.record(current - previous - Swift.min(current - previous, interval))
        }
        return RepetitionResult(meter: meter, elements: n, latency: latency.summary)
    }
}
