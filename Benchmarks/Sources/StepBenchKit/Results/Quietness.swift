import Foundation

/// What else ran on the machine while a run timed (`stepbench run`'s timing pass and the rounds
/// added to decide): the CPU time every other process took over that window and the load
/// average at its edges. A timing verdict drawn while others kept the machine busy may be the
/// load's, and the verdict says so (``Verdict/disturbed``) rather than deciding silently.
///
/// Other processes' CPU time is the machine's busy time (/proc/stat: user, nice, system, irq,
/// softirq; not idle, iowait or steal) less this process's and its waited-for children's
/// (getrusage), in the kernel's ticks (USER_HZ), so ±10 ms a tick.
public struct Quietness: Codable, Equatable, Sendable {
    /// The window's wall-clock seconds.
    public var seconds: Double
    /// CPU seconds other processes took in the window.
    public var otherCPUSeconds: Double
    /// The one-minute load average at the window's start and at its end.
    public var loadAverage: [Double]

    /// Other processes' CPU time over the window's wall time: the cores' worth they kept busy.
    public var otherCores: Double { seconds > 0 ? max(0, otherCPUSeconds) / seconds : 0 }

    /// A run is disturbed when other processes kept more than this much of a core busy on
    /// average: a quarter of one of a two-core machine's cores is a spinning hand-off's partner
    /// waiting a quarter of the time.
    public static let disturbedCores = 0.25

    public var disturbed: Bool { otherCores > Self.disturbedCores }

    /// "other processes kept 0.02 cores busy (load average 0.31 → 0.85)".
    public var summary: String {
        let loads = loadAverage.map { String(format: "%.2f", $0) }.joined(separator: " → ")
        return String(format: "other processes kept %.2f cores busy over %.0f s", otherCores, seconds)
            + (loads.isEmpty ? "" : " (load average \(loads))")
    }

    /// A reading at the window's start; ``finish()`` closes it.
    public struct Reading: Sendable {
        let wall: UInt64
        let busyTicks: UInt64?
        let ownCPU: Double
        let load: Double?

        public static func now() -> Reading {
            Reading(
                wall: DispatchTime.now().uptimeNanoseconds, busyTicks: Quietness.busyTicks(),
                ownCPU: Quietness.ownCPUSeconds(), load: Quietness.loadAverage())
        }

        /// The window from this reading to now.
        public func finish() -> Quietness {
            let end = Reading.now()
            let seconds = Double(end.wall - wall) / 1e9
            var other = 0.0
            if let a = busyTicks, let b = end.busyTicks, b >= a {
                let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
                other = Double(b - a) / (hz > 0 ? hz : 100) - (end.ownCPU - ownCPU)
            }
            return Quietness(
                seconds: seconds, otherCPUSeconds: max(0, other), loadAverage: [load, end.load].compactMap { $0 })
        }
    }

    /// The machine's busy ticks since boot (/proc/stat's first line), or nil where it cannot be read.
    static func busyTicks() -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 7 else { return nil }
        // user nice system idle iowait irq softirq [steal guest guest_nice]: guest is in user.
        return fields[0] + fields[1] + fields[2] + fields[5] + fields[6]
    }

    /// This process's CPU seconds and its terminated, waited-for children's.
    static func ownCPUSeconds() -> Double {
        func seconds(_ who: Int32) -> Double {
            var usage = rusage()
            getrusage(who, &usage)
            func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
            return s(usage.ru_utime) + s(usage.ru_stime)
        }
        return seconds(RUSAGE_SELF.rawValue) + seconds(RUSAGE_CHILDREN.rawValue)
    }

    static func loadAverage() -> Double? {
        var loads = [Double](repeating: 0, count: 1)
        return getloadavg(&loads, 1) == 1 ? loads[0] : nil
    }
}
