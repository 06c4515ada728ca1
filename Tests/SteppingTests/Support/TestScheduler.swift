import Foundation
@preconcurrency import OpenCombine

/// A virtual-time scheduler: actions run only when the test advances the clock, in time order
/// (ties in scheduling order). Time is in nanoseconds from 0.
final class TestScheduler: Scheduler, @unchecked Sendable {  // state behind `lock`
    struct SchedulerTimeType: Strideable, Hashable {
        var nanoseconds: Int
        func distance(to other: Self) -> Stride { Stride(other.nanoseconds - nanoseconds) }
        func advanced(by n: Stride) -> Self { Self(nanoseconds: nanoseconds + n.nanoseconds) }
        var seconds: Double { Double(nanoseconds) / 1e9 }

        struct Stride: SchedulerTimeIntervalConvertible, Comparable, SignedNumeric, Hashable,
            ExpressibleByFloatLiteral
        {
            var nanoseconds: Int
            init(_ nanoseconds: Int) { self.nanoseconds = nanoseconds }
            init(integerLiteral value: Int) { nanoseconds = value * 1_000_000_000 }
            init(floatLiteral value: Double) { nanoseconds = Int((value * 1e9).rounded()) }
            init?<T: BinaryInteger>(exactly source: T) {
                guard let v = Int(exactly: source) else { return nil }
                nanoseconds = v
            }
            var magnitude: Int { abs(nanoseconds) }
            static func seconds(_ s: Int) -> Self { Self(s * 1_000_000_000) }
            static func seconds(_ s: Double) -> Self { Self(Int((s * 1e9).rounded())) }
            static func milliseconds(_ ms: Int) -> Self { Self(ms * 1_000_000) }
            static func microseconds(_ us: Int) -> Self { Self(us * 1_000) }
            static func nanoseconds(_ ns: Int) -> Self { Self(ns) }
            static func < (l: Self, r: Self) -> Bool { l.nanoseconds < r.nanoseconds }
            static func + (l: Self, r: Self) -> Self { Self(l.nanoseconds + r.nanoseconds) }
            static func - (l: Self, r: Self) -> Self { Self(l.nanoseconds - r.nanoseconds) }
            static func * (l: Self, r: Self) -> Self { Self(l.nanoseconds * r.nanoseconds) }
            static func += (l: inout Self, r: Self) { l = l + r }
            static func -= (l: inout Self, r: Self) { l = l - r }
            static func *= (l: inout Self, r: Self) { l = l * r }
        }
    }
    typealias SchedulerOptions = Never

    private struct Job {
        var time: Int
        var sequence: Int
        var action: () -> Void
    }

    private let lock = NSLock()
    private var _now = 0
    private var sequence = 0
    private var jobs: [Job] = []

    var now: SchedulerTimeType { lock.withLock { SchedulerTimeType(nanoseconds: _now) } }
    var minimumTolerance: SchedulerTimeType.Stride { .init(0) }

    func schedule(options: Never?, _ action: @escaping () -> Void) {
        lock.withLock { enqueue(at: _now, action) }
    }

    func schedule(
        after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride,
        options: Never?, _ action: @escaping () -> Void
    ) {
        lock.withLock { enqueue(at: date.nanoseconds, action) }
    }

    func schedule(
        after date: SchedulerTimeType, interval: SchedulerTimeType.Stride,
        tolerance: SchedulerTimeType.Stride, options: Never?,
        _ action: @escaping () -> Void
    ) -> Cancellable {
        fatalError("repeating actions are not used by these tests")
    }

    private func enqueue(at time: Int, _ action: @escaping () -> Void) {
        sequence += 1
        jobs.append(Job(time: max(time, _now), sequence: sequence, action: action))
    }

    /// Runs every action due up to `now + stride`, advancing the clock to each in turn.
    func advance(by stride: SchedulerTimeType.Stride) {
        let end = lock.withLock { _now + stride.nanoseconds }
        while true {
            let next: Job? = lock.withLock {
                guard
                    let i = jobs.indices.min(by: {
                        (jobs[$0].time, jobs[$0].sequence) < (jobs[$1].time, jobs[$1].sequence)
                    }),
                    jobs[i].time <= end
                else { return nil }
                let job = jobs.remove(at: i)
                _now = job.time
                return job
            }
            guard let job = next else { break }
            job.action()
        }
        lock.withLock { _now = end }
    }
}
