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
    /// The round of its run this repetition was measured in, where the run added rounds to some
    /// of its rows (`stepbench run --decide`): two rows' repetitions pair by round
    /// (``sameRounds(_:_:)``). Nil: its index in its row (every row of a run without added
    /// rounds, and each row's first pass).
    public var round: Int? = nil

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

    /// The repetitions of two rows of one run measured in the same rounds, in the order of `a`:
    /// by ``round`` (its index in its row where it has none). Rows of a run without added rounds
    /// pair index by index, the shorter's length.
    public static func sameRounds(_ a: [RepetitionResult], _ b: [RepetitionResult])
        -> [(RepetitionResult, RepetitionResult)]
    {
        guard a.contains(where: { $0.round != nil }) || b.contains(where: { $0.round != nil }) else {
            return Array(zip(a, b))
        }
        var byRound: [Int: RepetitionResult] = [:]
        for (i, r) in b.enumerated() { byRound[r.round ?? i] = r }
        return a.enumerated().compactMap { i, r in byRound[r.round ?? i].map { (r, $0) } }
    }

    /// The round of the repetition at `index` of its row (``round``, else the index).
    public func round(at index: Int) -> Int { round ?? index }

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
