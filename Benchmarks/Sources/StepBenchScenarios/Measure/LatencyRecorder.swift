import Histogram

/// Per-event latencies in nanoseconds (HdrHistogram, 3 significant digits).
public struct LatencyRecorder: Sendable {
    public private(set) var histogram = Histogram<UInt64>(
        highestTrackableValue: 60_000_000_000,
        numberOfSignificantValueDigits: .three)
    public init() {}

    @inline(__always)
    public mutating func record(_ nanoseconds: UInt64) {
        _ = histogram.record(Swift.max(1, nanoseconds))
    }

    public mutating func merge(_ other: LatencyRecorder) { histogram.add(other.histogram) }

    public var summary: LatencySummary? {
        guard histogram.totalCount > 0 else { return nil }
        return LatencySummary(
            count: histogram.totalCount,
            p50: histogram.valueAtPercentile(50), p90: histogram.valueAtPercentile(90),
            p99: histogram.valueAtPercentile(99), p999: histogram.valueAtPercentile(99.9),
            p9999: histogram.valueAtPercentile(99.99), max: histogram.max)
    }
}

/// Latency percentiles of one repetition, in nanoseconds.
public struct LatencySummary: Codable, Equatable, Sendable {
    public var count: UInt64
    public var p50: UInt64
    public var p90: UInt64
    public var p99: UInt64
    public var p999: UInt64
    public var p9999: UInt64
    public var max: UInt64

    public init(count: UInt64, p50: UInt64, p90: UInt64, p99: UInt64, p999: UInt64, p9999: UInt64, max: UInt64) {
        (self.count, self.p50, self.p90, self.p99, self.p999, self.p9999, self.max) = (
            count, p50, p90, p99, p999, p9999, max
        )
    }
}
