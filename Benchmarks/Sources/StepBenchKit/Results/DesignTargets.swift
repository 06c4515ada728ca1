import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// The targets of "What the API costs" (docs/METHOD.md, "Against the targets"), each decided on
/// a run's files: the limits are written here once, and `stepbench show document` hands each verdict to
/// the report, which lays it out. A target a file does not measure has no verdict (`met` nil).
public struct DesignTarget: Encodable, Equatable, Sendable {
    /// What a target limits, and so which figures its verdict carries.
    public enum Kind: String, Encodable, Sendable {
        /// Instructions per element over the API floor (floor-step) on a path: `value` over the
        /// floor, `instructions` and `floorStep` the two counts.
        case overFloor
        /// Synchronising instructions over floor-step's on a path, exactly `limit`: `value`.
        case synchronising
        /// One design's median over another's: `value` the ratio, `a` and `b` the two medians.
        case times
        /// Allocations per element at most the gate's tolerance for the count (`limit`): `value`.
        case allocations
        /// A p50 over its floor's: `value` the ratio.
        case ratioToFloor
    }

    public var target: String
    public var kind: Kind
    public var limit: Double
    /// nil: not in these files.
    public var met: Bool?
    public var value: Double?
    /// Whether the figure the target reads is in the files at all (a cost split, two rows); a
    /// target measured but without a value (a split with no synchronising count) has `value` nil.
    public var measured: Bool
    public var instructions: Double? = nil
    public var floorStep: Double? = nil
    public var a: Double? = nil
    public var b: Double? = nil

    /// Every target, decided on `file` (the combined run and profile).
    public static func evaluate(_ file: ResultsFile) -> [DesignTarget] {
        let perElement = ScenarioKind.answering(.perElement), cross = ScenarioKind.answering(.crossThread)
        let parked = ScenarioKind.answering(.asynchronousVerdict)
        func split(_ path: String, _ design: SteppingDesign) -> ResultsFile.CostSplit? {
            file.costSplits?.first { $0.path == path && $0.design == design.rawValue }
        }
        func over(_ path: String, _ design: SteppingDesign, _ limit: Double, _ target: String) -> DesignTarget {
            let c = split(path, design)
            return DesignTarget(
                target: target, kind: .overFloor, limit: limit, met: c.map { $0.synchronisation <= limit },
                value: c?.synchronisation, measured: c != nil, instructions: c?.instructions, floorStep: c?.floorStep)
        }
        func synchronising(_ path: String, _ design: SteppingDesign, _ limit: Double, _ target: String) -> DesignTarget
        {
            let c = split(path, design), value = c?.synchronisingOverFloorStep
            return DesignTarget(
                target: target, kind: .synchronising, limit: limit, met: value.map { $0 == limit }, value: value,
                measured: c != nil)
        }
        func row(_ scenario: ScenarioKind, _ design: SteppingDesign, _ threads: Int) -> ResultsFile.Summary? {
            file.rows.first {
                $0.scenario == scenario && $0.design == .design(design) && $0.threads == threads && $0.status == .ok
            }?.summary
        }
        func times(
            _ scenario: ScenarioKind, _ threads: Int, _ median: (ResultsFile.Summary) -> Double?,
            _ design: SteppingDesign,
            _ base: SteppingDesign, _ limit: Double, _ target: String
        ) -> DesignTarget {
            let a = row(scenario, design, threads).flatMap(median), b = row(scenario, base, threads).flatMap(median)
            guard let a, let b, a > 0, b > 0 else {
                return DesignTarget(target: target, kind: .times, limit: limit, met: nil, value: nil, measured: false)
            }
            return DesignTarget(
                target: target, kind: .times, limit: limit, met: a / b <= limit, value: a / b, measured: true, a: a,
                b: b)
        }
        let step = perElement.rawValue
        let allocations = row(perElement, .actor, 1)?.allocationsPerElement.median
        let tolerance =
            (file.writtenWith.benchmarks + Catalog.current.benchmarks).first {
                $0.scenario == step && $0.design == SteppingDesign.actor.rawValue
            }?.allocationTolerance
        var out = [
            over(step, .atomic, 120, "`atomic` ≤ floor-step + 120 instructions/element in \(step)"),
            over("deferred-more", .atomic, 150, "`atomic` ≤ floor-step + 150 on `deferred-more`"),
            synchronising(
                "sync-more", .atomic, 3,
                "`atomic`'s synchronising instructions: exactly 3 over floor-step's on `sync-more`"
            ),
            synchronising("deferred-more", .atomic, 4, "… and exactly 4 on `deferred-more`"),
            over(step, .mutex, 300, "`mutex` ≤ floor-step + 300 in \(step)"),
            over(step, .locked, 300, "`locked` ≤ floor-step + 300 in \(step)"),
            times(
                perElement, 1, { $0.nsPerElement.median }, .actor, .atomic, 1.5,
                "`actor` \(step) ≤ 1.5× `atomic`'s time"),
            DesignTarget(
                target: "`actor` 0 allocations/element in \(step)", kind: .allocations, limit: tolerance ?? 0,
                met: allocations.flatMap { a in tolerance.map { a <= $0 } },
                value: tolerance == nil ? nil : allocations, measured: allocations != nil && tolerance != nil),
            times(
                cross, 2, { $0.latencyP50?.median }, .actor, .atomic, 3,
                "`actor` \(cross.rawValue) ×2 p50 ≤ 3× `atomic`'s"),
        ]
        if file.rows.contains(where: { $0.scenario == parked && $0.status == .ok && $0.summary != nil }) {
            let ratio = row(parked, .actor, 2)?.latencyP50RatioToFloor
            out.append(
                DesignTarget(
                    target:
                        "`actor` \(parked.rawValue) p50 no worse than 1.71× its floor's (the committed run before 47920ab)",
                    kind: .ratioToFloor, limit: 1.71, met: ratio.map { $0 <= 1.71 }, value: ratio,
                    measured: ratio != nil))
        }
        return out
    }
}

/// The fewest exact count of a profiled scenario among a field of designs (``Ranking/Field``):
/// exact counts need no rounds, so the fewest is decided unless another design counts as few.
public struct FewestCount: Encodable, Equatable, Sendable {
    public var scenario: ScenarioKind
    public var metric: Metric = .instructionsPerElement
    public var field: Ranking.Field
    /// By count, fewest first.
    public var standings: [Standing]
    /// The first standing, when no other counts as few (nil: a tie).
    public var best: Subject?

    public struct Standing: Encodable, Equatable, Sendable {
        public var design: Subject
        public var count: Double
    }

    /// Every profiled scenario of `file` with at least two designs, for each field with two.
    public static func rank(_ file: ResultsFile) -> [FewestCount] {
        let catalog = file.writtenWith
        let peers = Set(catalog.peers ?? []), asynchronous = Set(catalog.asynchronousDesigns)
        var out: [FewestCount] = []
        let profiles = (file.profiles ?? []).filter { !$0.scenario.isFloor }
        var seen: [ScenarioKind] = []
        for p in profiles where !seen.contains(p.scenario) { seen.append(p.scenario) }
        for scenario in seen {
            for field in Ranking.Field.allCases {
                let counted = profiles.filter { p in
                    guard p.scenario == scenario else { return false }
                    switch field {
                    case .all: return true
                    case .designs: return !peers.contains(p.design.name)
                    case .asynchronous: return asynchronous.contains(p.design.name)
                    }
                }
                guard counted.count >= 2 else { continue }
                let standings = counted.map { Standing(design: $0.design, count: $0.instructionsPerElement) }
                    .sorted { $0.count < $1.count }
                let best = standings[1].count == standings[0].count ? nil : standings[0].design
                out.append(FewestCount(scenario: scenario, field: field, standings: standings, best: best))
            }
        }
        return out
    }
}
