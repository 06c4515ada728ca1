import Foundation
import StepBenchScenarios

/// The designs of one run ranked on one question (`stepbench show ranking`): one (scenario, threads)
/// and a timing metric, every design and peer that measured it, by median, with every pair
/// compared round by round.
///
/// A run measures a scenario's designs in the same rounds, in one block, seconds apart (see
/// ``BenchmarkRunner``), so repetition *r* of one design and repetition *r* of another saw the
/// same machine: the log of their ratio per round cancels the drift between rounds, as
/// `stepbench compare --paired` does between processes. A pair's ratio is the geometric mean of its
/// rounds' ratios, its interval the 95% Student-t interval of their mean log; the faster of two
/// is *separated* from the slower when that interval lies wholly above 1 (and the pair is
/// *reversed* when it lies wholly below: the slower by median is faster round by round). The
/// best design is named only where it is separated from every other: the rest are its ties
/// (the report says "a tie", with the interval) or faster round by round (the report says so). With fewer than three rounds in common nothing is separated.
/// Each pair is its own 95% test (the report reads a few pairs per question, not a family).
///
/// A question is ranked over every design and peer that measured it (``Field/all``), and again
/// over the fields a report asks about alone: the designs without the peers, and the designs
/// that deliver on their own executor. Each ranking's JSON carries its decision (`first`,
/// `best`, `ties`, `ahead`): the report and the figures draw it and decide nothing.
public struct Ranking: Encodable, Equatable, Sendable {
    public var scenario: ScenarioKind
    public var threads: Int
    public var metric: Metric
    /// Which designs are ranked.
    public var field: Field = .all
    /// By median, lowest first.
    public var standings: [Standing]
    /// Every pair of `standings`, the faster (by median) first.
    public var pairs: [Pair]

    /// Which designs of a question a ranking ranks.
    public enum Field: String, Codable, CaseIterable, Sendable {
        /// Every design and peer that measured the question.
        case all
        /// The designs without the peers (the file's catalog names the peers).
        case designs
        /// The designs that deliver on their own executor (the file's catalog names them).
        case asynchronous
    }

    /// One ranked measurement (its ``MeasureKey``: this question's scenario, threads and metric,
    /// and the design measured), its median and repetitions. The JSON names the design.
    public struct Standing: Encodable, Equatable, Sendable {
        public var key: MeasureKey
        public var median: Double
        public var repetitions: Int
        public var design: Subject { key.subject }

        private enum CodingKeys: String, CodingKey { case design, median, repetitions }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(design, forKey: .design)
            try c.encode(median, forKey: .median)
            try c.encode(repetitions, forKey: .repetitions)
        }
    }

    public struct Pair: Encodable, Equatable, Sendable {
        public let faster: Subject
        public let slower: Subject
        /// Slower over faster, the geometric mean over the rounds both ran (nil: too few rounds).
        public let ratio: Double?
        public let ciLow: Double?
        public let ciHigh: Double?
        public let rounds: Int
        /// The interval lies wholly above 1: `faster` is faster.
        public let separated: Bool
        /// The interval lies wholly below 1: `slower` (by median) is faster round by round (a
        /// bimodal timing can put the medians and the rounds at odds).
        public let reversed: Bool
        /// The interval lies wholly inside ±``Ranking/equivalenceMargin`` (1/(1+m) to 1+m): the
        /// two are equivalent within the margin, a decided tie.
        public let equivalent: Bool

        /// `interval`: the ratio and its interval (nil with too few rounds), which decide
        /// `separated` and `reversed`.
        init(faster: Subject, slower: Subject, rounds: Int, interval: (center: Double, low: Double, high: Double)?) {
            (self.faster, self.slower, self.rounds) = (faster, slower, rounds)
            (ratio, ciLow, ciHigh) = (interval?.center, interval?.low, interval?.high)
            separated = interval.map { $0.low > 1 } ?? false
            reversed = interval.map { $0.high < 1 } ?? false
            equivalent = interval.map { Ranking.withinMargin($0.low) && Ranking.withinMargin($0.high) } ?? false
        }
    }

    /// The two-sided level of each pair's interval.
    public static let level = 0.95
    /// Rounds a pair needs before it can be separated.
    public static let minimumRounds = 3
    /// The equivalence margin m, declared once: two designs whose ratio's interval lies wholly
    /// inside 1/(1+m) to 1+m are equivalent within ±m (a decided tie; both one-sided tests at
    /// the interval's 2.5% each). At most ±10%: a user cannot act on a wider "the same".
    public static let equivalenceMargin = 0.10

    /// Whether `ratio` lies inside ±``equivalenceMargin``.
    public static func withinMargin(_ ratio: Double) -> Bool {
        ratio >= 1 / (1 + equivalenceMargin) && ratio <= 1 + equivalenceMargin
    }

    /// The first standing, if it is separated from every other; nil when it ties with one (or
    /// one is faster round by round).
    public var best: Subject? {
        guard let first = standings.first,
            !pairs.contains(where: { $0.faster == first.design && !$0.separated })
        else { return nil }
        return first.design
    }

    /// The designs slower than `design` by median but faster round by round (its reversed pairs).
    public func ahead(of design: Subject) -> [Subject] {
        pairs.filter { $0.faster == design && $0.reversed }.map(\.slower)
    }

    /// The designs `design` is not separated from either way.
    public func ties(of design: Subject) -> [Subject] {
        pairs.compactMap { p in
            guard !p.separated, !p.reversed else { return nil }
            return p.faster == design ? p.slower : p.slower == design ? p.faster : nil
        }
    }

    /// The first standing's decision, as the JSON carries it: `first` (lowest median), `best`
    /// (`first` where it is separated from every other, else null), `ties` (the designs it is not
    /// separated from either way) and `ahead` (those faster round by round though slower by
    /// median).
    private enum CodingKeys: String, CodingKey {
        case scenario, threads, metric, field, standings, pairs, first, best, ties, ahead
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(scenario, forKey: .scenario)
        try c.encode(threads, forKey: .threads)
        try c.encode(metric, forKey: .metric)
        try c.encode(field, forKey: .field)
        try c.encode(standings, forKey: .standings)
        try c.encode(pairs, forKey: .pairs)
        let first = standings.first?.design
        try c.encode(first?.name, forKey: .first)
        try c.encode(best?.name, forKey: .best)
        try c.encode(first.map { ties(of: $0).map(\.name) } ?? [], forKey: .ties)
        try c.encode(first.map { ahead(of: $0).map(\.name) } ?? [], forKey: .ahead)
    }

    /// The metrics a run is ranked on: time per element, and the latency of the hand-off.
    public static let metrics: [Metric] = [.nsPerElement, .latencyP50]

    /// Every (scenario, threads, metric) of `file` with at least two designs that measured it
    /// (floors are not ranked), in the file's order: over every design and peer, then over each
    /// other field with at least two of them.
    public static func rank(_ file: ResultsFile) -> [Ranking] {
        let catalog = file.writtenWith
        let peers = Set(catalog.peers ?? []), asynchronous = Set(catalog.asynchronousDesigns)
        func member(_ field: Field, _ design: Subject) -> Bool {
            switch field {
            case .all: true
            case .designs: !peers.contains(design.name)
            case .asynchronous: asynchronous.contains(design.name)
            }
        }
        var result: [Ranking] = []
        // A question is a scenario at a thread count: a row's key without its subject.
        var seen = Set<RowKey>()
        for row in file.rows where !row.scenario.isFloor {
            let question = RowKey(scenario: row.scenario, design: .floor, threads: row.threads)
            guard !seen.contains(question) else { continue }
            seen.insert(question)
            let rows = file.rows.filter {
                $0.scenario == row.scenario && $0.threads == row.threads && $0.status == .ok && !$0.repetitions.isEmpty
            }
            for field in Field.allCases {
                for metric in metrics {
                    if var ranking = rank(
                        rows.filter { member(field, $0.design) }, scenario: row.scenario, threads: row.threads,
                        metric: metric)
                    {
                        ranking.field = field
                        result.append(ranking)
                    }
                }
            }
        }
        return result
    }

    static func rank(_ rows: [ResultsFile.Row], scenario: ScenarioKind, threads: Int, metric: Metric) -> Ranking? {
        guard let value = Comparison.timingMetrics.first(where: { $0.0 == metric })?.1 else { return nil }
        let measured: [(design: Subject, values: [Double], repetitions: [RepetitionResult])] = rows.compactMap {
            row in
            let values = row.repetitions.map(value)
            guard values.allSatisfy({ ($0 ?? 0) > 0 }) else { return nil }
            return (row.design, values.map { $0! }, row.repetitions)
        }
        guard measured.count >= 2 else { return nil }
        let ordered = measured.map { ($0, Statistics.median($0.values)) }.sorted { $0.1 < $1.1 }
        var pairs: [Pair] = []
        for i in ordered.indices {
            for j in ordered.indices where j > i {
                let (fast, slow) = (ordered[i].0, ordered[j].0)
                // round by round (``RepetitionResult/sameRounds(_:_:)``)
                let logs = RepetitionResult.sameRounds(slow.repetitions, fast.repetitions).map {
                    log(value($0)! / value($1)!)
                }
                pairs.append(
                    Pair(
                        faster: fast.design, slower: slow.design, rounds: logs.count,
                        interval: logs.count >= minimumRounds
                            ? Statistics.studentTInterval(ofLogs: logs, tail: (1 - level) / 2) : nil))
            }
        }
        return Ranking(
            scenario: scenario, threads: threads, metric: metric,
            standings: ordered.map {
                Standing(
                    key: MeasureKey(RowKey(scenario: scenario, design: $0.0.design, threads: threads), metric),
                    median: $0.1, repetitions: $0.0.values.count)
            },
            pairs: pairs)
    }
}
