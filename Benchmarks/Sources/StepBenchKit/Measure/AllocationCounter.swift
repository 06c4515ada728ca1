import CJemalloc
import CJemallocConfig
import StepBenchScenarios

/// Exact allocation counts from jemalloc's statistics.
///
/// StepBenchKit links jemalloc, which then serves every `malloc` in the process, with thread
/// caches disabled (see CJemallocConfig) so the arena counters see every allocation on every
/// thread. `count()` refreshes the statistics (`epoch`) and returns the total number of
/// allocations made so far (small + large `nmalloc` over all arenas).
public enum AllocationCounter {
    /// "jemalloc 5.3.0 (tcache:false)" — recorded in every results file. The thread-cache setting
    /// is read back from jemalloc (`opt.tcache`), so a `MALLOC_CONF` override shows.
    public static var allocatorDescription: String {
        var version: UnsafePointer<CChar>? = nil
        var size = MemoryLayout<UnsafePointer<CChar>?>.size
        let ok = mallctl("version", &version, &size, nil, 0) == 0
        let v = ok ? version.map { String(cString: $0) } ?? "?" : "?"
        return "jemalloc \(v.split(separator: "-").first.map(String.init) ?? v) (tcache:\(threadCaches))"
    }

    /// Whether jemalloc's thread caches are on. Off (the built-in `malloc_conf`, CJemallocConfig)
    /// every allocation reaches the arena counters: exact counts. On (`MALLOC_CONF=tcache:true`,
    /// jemalloc's own default, as users run it) allocations are cheaper but counted late.
    public static var threadCaches: Bool {
        var enabled = false
        var size = MemoryLayout<Bool>.size
        return mallctl("opt.tcache", &enabled, &size, nil, 0) == 0 && enabled
    }

    /// Makes ``Meter`` (StepBenchScenarios) read its allocation counts from here. Idempotent.
    public static func install() {
        MeterHooks.install(MeterHooks(countAllocations: { try count() }))
    }

    /// Whether jemalloc's statistics are readable (it is linked and built with stats).
    public static var isAvailable: Bool { (try? count()) != nil }

    /// Total allocations so far in this process.
    public static func count() throws -> UInt64 {
        var epoch: UInt64 = 0
        var newEpoch: UInt64 = 1
        var size = MemoryLayout<UInt64>.size
        guard mallctl("epoch", &epoch, &size, &newEpoch, MemoryLayout<UInt64>.size) == 0 else {
            throw ScenarioFailure("jemalloc: mallctl(epoch) failed; is jemalloc linked with statistics?")
        }
        return try read("stats.arenas.4096.small.nmalloc") + read("stats.arenas.4096.large.nmalloc")
    }

    private static func read(_ name: String) throws -> UInt64 {
        var value: UInt64 = 0
        var size = MemoryLayout<UInt64>.size
        guard mallctl(name, &value, &size, nil, 0) == 0 else {
            throw ScenarioFailure("jemalloc: mallctl(\(name)) failed")
        }
        return value
    }
}
