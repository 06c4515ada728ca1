import Foundation

/// Monotonic nanoseconds (CLOCK_MONOTONIC via `DispatchTime`), comparable across threads.
@_spi(StepBench)
@inlinable @inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}
