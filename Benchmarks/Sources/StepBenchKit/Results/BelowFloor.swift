import Foundation
import StepBenchScenarios

/// A row measured below its own floor, and why (`stepbench show document`'s `belowFloor`). No design can
/// beat doing nothing, so such a number is never printed without its cause, which is decided
/// here, in this order: the tool flags the row as a harness defect (said beside any cause); the
/// floor's row is not in the file (unexplained); the floor counted more of some count per unit of
/// work than the row did, by at least ``countNamed`` (the floor did more than the row and is no
/// lower bound for it); the row's interval still reaches the floor's median (not separated from
/// it); else unexplained. An unexplained row is not decided.
public struct BelowFloor: Encodable, Equatable, Sendable {
    public enum Cause: String, Encodable, Sendable {
        case floorMissing = "floor-missing"
        case counts
        case notSeparated = "not-separated"
        /// The row and its floor ran in the same rounds (a floor runs in its scenario's block,
        /// seconds from each design), and the 95% interval of their ratio round by round reaches
        /// 1: the rounds do not separate the row from its floor, as ``Ranking`` pairs designs.
        case notSeparatedInRounds = "not-separated-in-rounds"
        case unexplained
    }

    /// A count the floor made more of than the row (per unit of work).
    public struct Count: Encodable, Equatable, Sendable {
        public var metric: String
        public var floor: Double
        public var row: Double
    }

    /// The row and the metric it is below its floor on (ns/element or p50 latency).
    public var key: MeasureKey
    /// The row's median over the floor's.
    public var ratio: Double
    /// The tool's harness warning names the row.
    public var flagged: Bool
    public var cause: Cause
    public var counts: [Count]
    /// The row's interval and the floor's median (nil when the floor is missing).
    public var ciLow: Double
    public var ciHigh: Double
    public var floorMedian: Double?
    /// The row over its floor round by round (geometric mean) and its 95% interval, from the
    /// rounds both ran (nil with fewer than ``Ranking/minimumRounds``).
    public var roundRatio: Double?
    public var roundLow: Double?
    public var roundHigh: Double?
    /// Whether the row may be decided on: not where the cause is unknown.
    public var decided: Bool { cause != .unexplained && cause != .floorMissing }

    /// The smallest count per unit of work a verdict names, and the smallest difference of counts
    /// it calls a cause.
    public static let countNamed = 0.05

    private enum CodingKeys: String, CodingKey {
        case ratio, flagged, cause, counts, ciLow, ciHigh, floorMedian, roundRatio, roundLow, roundHigh, decided
    }

    public func encode(to encoder: any Encoder) throws {
        try key.encodeFields(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ratio, forKey: .ratio)
        try c.encode(flagged, forKey: .flagged)
        try c.encode(cause, forKey: .cause)
        try c.encode(counts, forKey: .counts)
        try c.encode(ciLow, forKey: .ciLow)
        try c.encode(ciHigh, forKey: .ciHigh)
        try c.encodeIfPresent(floorMedian, forKey: .floorMedian)
        try c.encodeIfPresent(roundRatio, forKey: .roundRatio)
        try c.encodeIfPresent(roundLow, forKey: .roundLow)
        try c.encodeIfPresent(roundHigh, forKey: .roundHigh)
        try c.encode(decided, forKey: .decided)
    }

    /// Every ok row of `file` below its floor on ns/element or p50 latency, in file order.
    public static func find(_ file: ResultsFile) -> [BelowFloor] {
        let countMetrics = file.writtenWith.countMetrics
        let warnings = file.harnessWarnings ?? []
        let metrics:
            [(
                Metric, (ResultsFile.Summary) -> Double?, (ResultsFile.Summary) -> ResultsFile.Estimate?,
                (RepetitionResult) -> Double?
            )] = [
                (.nsPerElement, { $0.ratioToFloor }, { $0.nsPerElement }, { $0.nsPerElement }),
                (.latencyP50, { $0.latencyP50RatioToFloor }, { $0.latencyP50 }, { $0.latency.map { Double($0.p50) } }),
            ]
        var out: [BelowFloor] = []
        for row in file.rows where row.status == .ok {
            guard let summary = row.summary else { continue }
            for (metric, ratioOf, estimateOf, perRound) in metrics {
                guard let ratio = ratioOf(summary), ratio < 1, let value = estimateOf(summary) else { continue }
                let flagged = warnings.contains { $0.hasPrefix("\(row.key):") }
                var below = BelowFloor(
                    key: MeasureKey(row.key, metric), ratio: ratio, flagged: flagged, cause: .unexplained, counts: [],
                    ciLow: value.ciLow, ciHigh: value.ciHigh, floorMedian: nil)
                guard let floor = file.floorRow(of: row), floor.status == .ok, let floorSummary = floor.summary else {
                    below.cause = .floorMissing
                    out.append(below)
                    continue
                }
                let mine = summary.counts ?? [:], theirs = floorSummary.counts ?? [:]
                below.counts = countMetrics.compactMap { m in
                    guard let t = theirs[m], let r = mine[m], t - r >= countNamed else { return nil }
                    return Count(metric: m, floor: t, row: r)
                }
                below.floorMedian = estimateOf(floorSummary)?.median
                let logs = RepetitionResult.sameRounds(row.repetitions, floor.repetitions).compactMap {
                    mine, theirs -> Double? in
                    guard let a = perRound(mine), let b = perRound(theirs), a > 0, b > 0 else { return nil }
                    return log(a / b)
                }
                if logs.count >= Ranking.minimumRounds {
                    let interval = Statistics.studentTInterval(ofLogs: logs, tail: (1 - Ranking.level) / 2)
                    (below.roundRatio, below.roundLow, below.roundHigh) = (interval.center, interval.low, interval.high)
                }
                if !below.counts.isEmpty {
                    below.cause = .counts
                } else if let median = below.floorMedian, value.ciHigh >= median {
                    below.cause = .notSeparated
                } else if let high = below.roundHigh, high >= 1 {
                    below.cause = .notSeparatedInRounds
                }
                out.append(below)
            }
        }
        return out
    }
}
