@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// Brackets one measured phase: wall time, CPU time and allocations between `start()` and
/// `stop()`. Scenarios call it around exactly the work they measure, after their set-up.
public struct Meter {
    private var startTime: UInt64 = 0
    private var startCPU: UInt64 = 0
    private var startAllocations: UInt64 = 0
    public private(set) var elapsedNanoseconds: UInt64 = 0
    public private(set) var cpuNanoseconds: UInt64 = 0
    public private(set) var allocations: UInt64 = 0
    public private(set) var scheduling: SchedulingCounts?
    private var startScheduling: SchedulingSnapshot?
    /// What contention made the designs do in the window (a counting build only, else nil).
    public private(set) var contention: ContentionCounts?
    private var startContention: ContentionCounts?

    public init() {}

    public mutating func start() throws {
        startScheduling = SchedulingSnapshot.now()  // allocates: before the allocation count starts
        startContention = Contention.snapshot()
        let hooks = try MeterHooks.current()
        startAllocations = try hooks.countAllocations()
        startCPU = ResourceUsage.now().cpuNanoseconds
        startTime = monotonicNanoseconds()
        hooks.didStart()
    }

    /// Ends the window. `endedAt`: when the measured work ended, as the thread that finished it
    /// recorded it (a parked waiter wakes up later than that); default: now.
    public mutating func stop(endedAt: UInt64? = nil) throws {
        let hooks = try MeterHooks.current()
        hooks.willStop()
        let end = endedAt ?? monotonicNanoseconds()
        let cpu = ResourceUsage.now().cpuNanoseconds
        let allocs = try hooks.countAllocations()
        if let startContention, let now = Contention.snapshot() { contention = now.since(startContention) }
        elapsedNanoseconds = end - startTime
        cpuNanoseconds = cpu - startCPU
        allocations = allocs - startAllocations
        if let startScheduling { scheduling = SchedulingSnapshot.now().since(startScheduling) }  // after the count
    }
}

/// What ``Meter`` asks of the program that measures. This module links no allocator of its own,
/// so that it runs under any: the measuring program installs a counter of its allocator's (or
/// hooks that open and close its own measurement at the very same points: `didStart` runs last
/// in `start()`, `willStop` first in `stop()`). With nothing
/// installed, measuring fails loudly rather than reporting zero allocations.
public struct MeterHooks: Sendable {
    public var countAllocations: @Sendable () throws -> UInt64
    public var didStart: @Sendable () -> Void
    public var willStop: @Sendable () -> Void

    public init(
        countAllocations: @escaping @Sendable () throws -> UInt64,
        didStart: @escaping @Sendable () -> Void = {}, willStop: @escaping @Sendable () -> Void = {}
    ) {
        self.countAllocations = countAllocations
        self.didStart = didStart
        self.willStop = willStop
    }

    private static let installed = Mutex<MeterHooks?>(nil)

    public static func install(_ hooks: MeterHooks) { installed.withLock { $0 = hooks } }

    static func current() throws -> MeterHooks {
        guard let hooks = installed.withLock({ $0 }) else {
            throw ScenarioFailure(
                "no allocation counter installed: install one with MeterHooks.install(_:) before measuring")
        }
        return hooks
    }
}
