@_spi(Measurement) import Stepping

/// The raw measurements of one repetition.
public struct RepetitionResult: Codable, Equatable, Sendable {
    public var elapsedNanoseconds: UInt64
    public var elements: Int
    public var allocations: UInt64
    public var cpuNanoseconds: UInt64
    public var latency: LatencySummary?
    /// fan-out: each pipeline's own time (its start to its completion), one per thread.
    public var threadNanoseconds: [UInt64]? = nil
    /// What the scheduler did during the window (context switches, migrations, steal).
    public var scheduling: SchedulingCounts? = nil
    /// What contention made the design do during the window (a counting build's pass only).
    public var contention: ContentionCounts? = nil
    /// The scenario's own count of the work around the elements (``ScenarioKind/sideMetric``):
    /// stale-storm's stale and duplicate promise calls, cancel-race's inputs over all rounds.
    public var sideEvents: UInt64? = nil
    /// The elements that `allocations` and `contention` were counted over, when the passes
    /// that count them ran fewer than this repetition timed (``ScenarioKind/countingElements(_:)``);
    /// nil: `elements`.
    public var countedElements: Int? = nil

    public init(
        elapsedNanoseconds: UInt64, elements: Int, allocations: UInt64, cpuNanoseconds: UInt64,
        latency: LatencySummary? = nil
    ) {
        self.elapsedNanoseconds = elapsedNanoseconds
        self.elements = elements
        self.allocations = allocations
        self.cpuNanoseconds = cpuNanoseconds
        self.latency = latency
    }

    init(meter: Meter, elements: Int, latency: LatencySummary? = nil, sideEvents: UInt64? = nil) {
        self.init(
            elapsedNanoseconds: meter.elapsedNanoseconds, elements: elements,
            allocations: meter.allocations, cpuNanoseconds: meter.cpuNanoseconds, latency: latency)
        scheduling = meter.scheduling
        contention = meter.contention
        self.sideEvents = sideEvents
    }

    public var nsPerElement: Double { Double(elapsedNanoseconds) / Double(elements) }
    public var elementsPerSecond: Double { Double(elements) * 1e9 / Double(max(elapsedNanoseconds, 1)) }
    public var allocationsPerElement: Double { Double(allocations) / Double(countedElements ?? elements) }
    /// One contention count per element (nil: not counted).
    public func contentionPerElement(_ count: (ContentionCounts) -> UInt64) -> Double? {
        contention.map { Double(count($0)) / Double(countedElements ?? elements) }
    }
    public var cpuNsPerElement: Double { Double(cpuNanoseconds) / Double(elements) }
    /// fan-out: the mean over pipelines of each pipeline's own ns per element (nil elsewhere).
    public var perThreadNsPerElement: Double? {
        guard let times = threadNanoseconds, !times.isEmpty else { return nil }
        let perPipeline = Double(elements) / Double(times.count)
        return times.reduce(0.0) { $0 + Double($1) / perPipeline } / Double(times.count)
    }
}
