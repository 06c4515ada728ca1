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
        return ResourceUsage(
            cpuNanoseconds: ns(usage.ru_utime) + ns(usage.ru_stime),
            peakRSSBytes: UInt64(usage.ru_maxrss) * 1024)
    }
}

/// What the scheduler did to a repetition, to explain its time (timing here is bimodal: a run's
/// repetitions cluster around two values for many rounds). Deltas over the measured window:
/// - voluntary / involuntary context switches of the whole process (getrusage; threads that
///   ended count too);
/// - CPU migrations (`se.nr_migrations` in /proc/self/task/*/sched) of the threads alive when
///   the window closed (a thread that ended earlier is not counted);
/// - steal time of the whole machine (/proc/stat: time the hypervisor gave our vCPUs to
///   someone else), in the kernel's ticks (USER_HZ) turned into nanoseconds, so ±10 ms.
public struct SchedulingCounts: Codable, Equatable, Sendable {
    public var voluntarySwitches: UInt64
    public var involuntarySwitches: UInt64
    public var migrations: UInt64
    public var stealNanoseconds: UInt64
}

/// One reading of the counters behind ``SchedulingCounts``. Reading /proc allocates, so
/// ``Meter`` takes it outside the window it counts allocations in.
struct SchedulingSnapshot {
    var voluntary: UInt64
    var involuntary: UInt64
    var migrationsByThread: [Int: UInt64]
    var stealTicks: UInt64

    static func now() -> SchedulingSnapshot {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        var migrations: [Int: UInt64] = [:]
        if let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") {
            for task in tasks {
                guard let tid = Int(task),
                    let text = try? String(contentsOfFile: "/proc/self/task/\(task)/sched", encoding: .utf8),
                    let line = text.split(separator: "\n").first(where: { $0.hasPrefix("se.nr_migrations") }),
                    let value = UInt64(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "")
                else { continue }
                migrations[tid] = value
            }
        }
        var steal: UInt64 = 0
        if let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let cpu = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        {
            let fields = cpu.split(separator: " ")
            // cpu user nice system idle iowait irq softirq steal
            if fields.count > 8 { steal = UInt64(fields[8]) ?? 0 }
        }
        return SchedulingSnapshot(
            voluntary: UInt64(usage.ru_nvcsw), involuntary: UInt64(usage.ru_nivcsw),
            migrationsByThread: migrations, stealTicks: steal)
    }

    /// What happened between `start` and this reading.
    func since(_ start: SchedulingSnapshot) -> SchedulingCounts {
        let migrations = migrationsByThread.reduce(UInt64(0)) { sum, entry in
            sum + entry.value - min(entry.value, start.migrationsByThread[entry.key] ?? 0)
        }
        let ticks = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))
        return SchedulingCounts(
            voluntarySwitches: voluntary &- start.voluntary, involuntarySwitches: involuntary &- start.involuntary,
            migrations: migrations, stealNanoseconds: (stealTicks &- start.stealTicks) * 1_000_000_000 / ticks)
    }
}
