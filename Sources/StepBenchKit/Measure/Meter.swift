/// Brackets one measured phase: wall time, CPU time and allocations between `start()` and
/// `stop()`. Scenarios call it around exactly the work they measure, after their set-up.
public struct Meter {
    private var startTime: UInt64 = 0
    private var startCPU: UInt64 = 0
    private var startAllocations: UInt64 = 0
    public private(set) var elapsedNanoseconds: UInt64 = 0
    public private(set) var cpuNanoseconds: UInt64 = 0
    public private(set) var allocations: UInt64 = 0

    public init() {}

    public mutating func start() throws {
        startAllocations = try AllocationCounter.count()
        startCPU = ResourceUsage.now().cpuNanoseconds
        startTime = monotonicNanoseconds()
    }

    public mutating func stop() throws {
        let end = monotonicNanoseconds()
        let cpu = ResourceUsage.now().cpuNanoseconds
        let allocs = try AllocationCounter.count()
        elapsedNanoseconds = end - startTime
        cpuNanoseconds = cpu - startCPU
        allocations = allocs - startAllocations
    }
}
