import Foundation

/// CPU time and peak memory of this process (getrusage).
public struct ResourceUsage: Sendable {
    /// User + system CPU time of all threads, in nanoseconds.
    public var cpuNanoseconds: UInt64
    /// Peak resident set size, in bytes.
    public var peakRSSBytes: UInt64

    public static func now() -> ResourceUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1_000 }
        return ResourceUsage(cpuNanoseconds: ns(usage.ru_utime) + ns(usage.ru_stime),
                             peakRSSBytes: UInt64(usage.ru_maxrss) * 1024)
    }
}
