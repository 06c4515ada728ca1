import Foundation
import StepBenchScenarios
import Stepping

/// `stepbench compare`: every (scenario, design, threads, metric) of two results files, with
/// the ratio current/baseline, its 95% confidence interval and a verdict.
///
/// **Interval.** Timing metrics use the percentile bootstrap of the ratio of medians, computed
/// exactly (``MedianBootstrap``: the infinite-resample limit, no seed, no Monte-Carlo error).
/// Why the bootstrap rather than Mann–Whitney: repetitions here are skewed, with bursts of
/// interference from the VM's neighbours, and Mann–Whitney's shift interval assumes both samples
/// have one shape; the bootstrap of the medians assumes nothing about the shape and gives the
/// interval of the effect size itself, which the `--min-effect` rule needs.
///
/// **Drift.** The bootstrap sees only the noise within each run. Given a ``NoiseProfile`` of this
/// machine kind (`--noise`), each interval is widened, in log space, by the between-run drift
/// the noise profile measured for that row and metric: half-width √(h² + (t·√2·σ̂_drift)²), where t is
/// the Student-t quantile with (runs − 1) degrees of freedom: σ̂_drift is estimated from a few
/// A/A runs, and treating it as known (a normal quantile) lets false alarms through.
///
/// **Pairing.** `ns_per_element_vs_floor` divides each repetition of a design by the repetition
/// of its scenario's own floor (``ScenarioKind/floor``) from the same round of the runner's
/// interleaving (in a merged file: from the same process). Drift of the whole machine hits both
/// alike and largely cancels in the ratio, which therefore drifts far less between runs than
/// raw ns/element (the noise profiles show how much).
///
/// **Verdict.** Decided on a family-wise interval: with m timing comparisons in the two files,
/// each at level 1 − 1%/m (Bonferroni), so a whole A/A comparison shows a false timing
/// regression at most 1% of the time. With e = `--min-effect`:
/// - regression: the interval lies above 1 (significant) *and* reaches 1 + e (an effect of e is
///   not excluded). Requiring the *point estimate* to pass 1 + e instead would catch a true
///   slowdown of exactly e only half the time;
/// - improvement: the mirror image (below 1, reaching 1/(1+e));
/// - unchanged: the interval lies inside [1/(1+e), 1+e], or the change is significant but shown
///   smaller than e;
/// - too noisy to tell: otherwise (the interval spans 1 and effects that matter).
/// The reported "95% CI" is the two-sided 95% interval, widened by drift alike.
///
/// **No drift estimate.** A row whose drift between runs is unknown (no noise profile, or the
/// noise profile did not measure that row and metric) cannot be called a regression or an
/// improvement on timing alone: the within-run bootstrap does not see how far a whole run
/// drifts, which on a shared VM is far more than its own interval. Such a row says
/// `no-drift-estimate` where it would have said regression or improvement.
///
/// Allocations per element are exact counts where the scenario declares them so
/// (``ScenarioKind/allocationTolerance(design:)``): an increase beyond that tolerance is a
/// regression. Where thread timing decides the count (the actors, pace-jitter), it is compared
/// like a timing metric. Instructions per element and per event (callgrind) are exact for one
/// binary: an increase of more than 0.5% is a regression; so is one of more than 0.5 in a path's
/// synchronising instructions or allocations per event. A combination that verified in the
/// baseline but failed in the current file is a regression too.
public struct Comparison: Codable, Equatable, Sendable {
    public enum Verdict: String, Codable, Sendable {
        case regression, improvement, unchanged
        case tooNoisy = "too-noisy"
        case failed
        case onlyInBaseline = "only-in-baseline"
        case onlyInCurrent = "only-in-current"
        /// A timing change the bootstrap sees, with no between-run drift estimate for the row:
        /// not evidence of a regression (see the type's documentation).
        case noDriftEstimate = "no-drift-estimate"
    }

    public struct Row: Codable, Equatable, Sendable {
        public var scenario: String
        public var design: String
        public var threads: Int
        public var metric: Metric
        public var exact: Bool
        public var baseline: Double?
        public var current: Double?
        public var ratio: Double?
        public var ciLow: Double?
        public var ciHigh: Double?
        public var verdict: Verdict
        /// The family-wise interval the verdict was decided on (timing metrics only).
        public var decisionLow: Double? = nil
        public var decisionHigh: Double? = nil
        /// The between-run drift (σ of the log-median) added from the noise profile, if any.
        public var driftSD: Double? = nil
    }

    public var baselineCommit: String
    public var currentCommit: String
    public var minEffect: Double
    /// Level of each timing comparison's decision interval: 1 − 1%/m over m timing comparisons.
    public var decisionLevel: Double
    /// The machine kind of the noise profile used (nil: bootstrap only, no drift allowance).
    public var noiseProfile: String?
    public var rows: [Row]

    public var regressions: [Row] { rows.filter { $0.verdict == .regression || $0.verdict == .failed } }
    /// Regressions in exact metrics only (instructions, allocations, failed verification), and
    /// anything the baseline measured that the current file no longer does (a gate that silently
    /// stops checking a row is no gate): the CI gate.
    public var exactRegressions: [Row] { regressions.filter(\.exact) + rows.filter { $0.verdict == .onlyInBaseline } }

    static let timingMetrics: [(Metric, @Sendable (RepetitionResult) -> Double?)] = [
        (.nsPerElement, { $0.nsPerElement }),
        (.cpuNsPerElement, { $0.cpuNsPerElement }),
        (.latencyP50, { $0.latency.map { Double($0.p50) } }),
        (.latencyP99, { $0.latency.map { Double($0.p99) } }),
    ]
    /// Family-wise false-alarm rate of a whole timing comparison.
    public static let familyWiseAlpha = 0.01

    /// Each tail of the decision interval when `comparisons` timing comparisons share the
    /// family-wise rate (Bonferroni).
    public static func decisionTail(comparisons: Int) -> Double {
        familyWiseAlpha / Double(max(1, comparisons)) / 2
    }

    /// Every timing metric of `row` with its per-repetition samples: the raw metrics, and
    /// `ns_per_element_vs_floor` when `file` holds the row's floor with as many repetitions
    /// (repetition i of the design is paired with repetition i of the floor).
    public static func timingSamples(_ row: ResultsFile.Row, in file: ResultsFile) -> [(
        metric: Metric, samples: [Double]
    )] {
        guard row.status == .ok, !row.repetitions.isEmpty else { return [] }
        var result: [(metric: Metric, samples: [Double])] = []
        for (name, value) in timingMetrics {
            let samples = row.repetitions.compactMap(value)
            if samples.count == row.repetitions.count && samples.allSatisfy({ $0 > 0 }) {
                result.append((name, samples))
            }
        }
        if !allocationsAreExact(row) {  // a count that follows thread timing is compared like a timing
            // only the repetitions that carry their own count: repeats would narrow the interval
            let samples = row.repetitions.prefix(row.allocationRepetitions ?? row.repetitions.count).map(
                \.allocationsPerElement)
            if samples.allSatisfy({ $0 > 0 }) { result.append((.allocationsPerElement, samples)) }
        }
        if let floor = row.scenario.floor,
            let floorThreads = floor.threadCounts(requested: [row.threads]).first,
            let floorRow = file.row(RowKey(scenario: floor, design: "floor", threads: floorThreads)),
            floorRow.status == .ok,
            floorRow.repetitions.count == row.repetitions.count
        {
            let paired = zip(row.repetitions, floorRow.repetitions).map { $0.nsPerElement / $1.nsPerElement }
            if paired.allSatisfy({ $0 > 0 && $0.isFinite }) { result.append((.nsPerElementVsFloor, paired)) }
        }
        return result
    }
    /// Whether `row`'s allocation count is fixed by the code: what the row says (stepbench/2),
    /// else the scenario's declaration (stepbench/1 rows carry no flag).
    public static func allocationsAreExact(_ row: ResultsFile.Row) -> Bool {
        row.allocationsExact ?? row.scenario.allocationsAreExact(design: SteppingDesign(rawValue: row.design))
    }

    /// For rows of scenarios this tool no longer declares a tolerance for.
    static let allocationTolerance = 0.01
    /// Instruction counts repeat exactly for one binary inside the measured window; an
    /// increase above 0.5% is a regression (a different binary moves code, and the count a
    /// little, without a change of the design).
    static let instructionTolerance = 0.005

    public static func compare(
        baseline: ResultsFile, current: ResultsFile, minEffect: Double = 0.05,
        noise: NoiseProfile? = nil
    ) -> Comparison {
        let base = Dictionary(baseline.rows.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        var rows: [Row] = []
        var seen = Set<RowKey>()
        // First pass: how many timing comparisons there are, for the family-wise level.
        var timingCount = 0
        for cur in current.rows {
            guard let old = base[cur.key] else { continue }
            let oldMetrics = Set(timingSamples(old, in: baseline).map(\.metric))
            timingCount += timingSamples(cur, in: current).filter { oldMetrics.contains($0.metric) }.count
        }
        let decisionTail = decisionTail(comparisons: timingCount)
        for cur in current.rows {
            seen.insert(cur.key)
            func row(_ metric: Metric, exact: Bool, verdict: Verdict) -> Row {
                Row(
                    scenario: cur.scenario.rawValue, design: cur.design, threads: cur.threads, metric: metric,
                    exact: exact, baseline: nil, current: nil, ratio: nil, ciLow: nil, ciHigh: nil, verdict: verdict)
            }
            guard let old = base[cur.key], old.status == .ok, !old.repetitions.isEmpty else {
                rows.append(row(.all, exact: false, verdict: .onlyInCurrent))
                continue
            }
            guard cur.status == .ok, !cur.repetitions.isEmpty else {
                var r = row(.verification, exact: true, verdict: .failed)
                r.ratio = nil
                rows.append(r)
                continue
            }
            let oldSamples = Dictionary(
                timingSamples(old, in: baseline).map { ($0.metric, $0.samples) }, uniquingKeysWith: { a, _ in a })
            for (name, b) in timingSamples(cur, in: current) {
                guard let a = oldSamples[name] else { continue }
                let drift = noise?.driftSD(cur.key, name)
                var r = timing(
                    name, baseline: a, current: b, driftSD: drift ?? 0, driftRuns: noise?.runs,
                    decisionTail: decisionTail, minEffect: minEffect)
                (r.scenario, r.design, r.threads) = (cur.scenario.rawValue, cur.design, cur.threads)
                r.driftSD = drift
                if drift == nil && (r.verdict == .regression || r.verdict == .improvement) {
                    r.verdict = .noDriftEstimate
                }
                rows.append(r)
            }
            guard allocationsAreExact(cur) else { continue }  // compared above, like a timing
            let tolerance =
                cur.scenario.allocationTolerance(design: SteppingDesign(rawValue: cur.design)) ?? allocationTolerance
            let a = Statistics.median(old.repetitions.map(\.allocationsPerElement))
            let b = Statistics.median(cur.repetitions.map(\.allocationsPerElement))
            let verdict: Verdict = b - a > tolerance ? .regression : a - b > tolerance ? .improvement : .unchanged
            rows.append(
                Row(
                    scenario: cur.scenario.rawValue, design: cur.design, threads: cur.threads,
                    metric: .allocationsPerElement, exact: true, baseline: a, current: b,
                    ratio: a > 0 ? b / a : nil, ciLow: nil, ciHigh: nil, verdict: verdict))
        }
        for old in baseline.rows where !seen.contains(old.key) {
            rows.append(
                Row(
                    scenario: old.scenario.rawValue, design: old.design, threads: old.threads, metric: .all,
                    exact: false, baseline: nil, current: nil, ratio: nil, ciLow: nil, ciHigh: nil,
                    verdict: .onlyInBaseline))
        }
        let oldProfiles = Dictionary((baseline.profiles ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let newProfiles = Set((current.profiles ?? []).map(\.key))
        for old in baseline.profiles ?? [] where !newProfiles.contains(old.key) {
            rows.append(
                exactRow(
                    old.scenario.rawValue, old.design, .instructionsPerElement, old.instructionsPerElement, nil,
                    .onlyInBaseline))
        }
        for p in current.profiles ?? [] {
            let before = oldProfiles[p.key]?.instructionsPerElement
            rows.append(
                exactRow(
                    p.scenario.rawValue, p.design, .instructionsPerElement, before, p.instructionsPerElement,
                    before.map { instructionVerdict($0, p.instructionsPerElement) } ?? .onlyInCurrent))
        }
        rows += pathRows(baseline, current)
        return Comparison(
            baselineCommit: baseline.machine.gitCommit, currentCommit: current.machine.gitCommit,
            minEffect: minEffect, decisionLevel: 1 - 2 * decisionTail, noiseProfile: noise?.machineId, rows: rows)
    }

    /// One timing comparison of `metric` (scenario, design and threads left blank for the
    /// caller): the ratio of medians, the 95% interval and the decision interval, both widened
    /// by `driftSD`.
    /// `reportInterval: false` skips the 95% interval (the synthetic trials need only the verdict).
    /// `driftRuns`: how many A/A runs `driftSD` was estimated from (nil: known exactly).
    public static func timing(
        _ metric: Metric, baseline a: [Double], current b: [Double], driftSD: Double,
        driftRuns: Int? = nil, decisionTail: Double, minEffect: Double,
        reportInterval: Bool = true
    ) -> Row {
        let ba = MedianBootstrap(a), bb = MedianBootstrap(b)
        let ratio = bb.median / ba.median
        func widened(tail: Double) -> (Double, Double) {
            let (low, high) = MedianBootstrap.ratioInterval(baseline: ba, current: bb, tail: tail)
            guard driftSD > 0 else { return (low, high) }
            let quantile =
                driftRuns.map { Statistics.studentTQuantile(1 - tail, degreesOfFreedom: max(1, $0 - 1)) }
                ?? Statistics.normalQuantile(1 - tail)
            let d = log(ratio), w = quantile * 2.0.squareRoot() * driftSD
            let down = max(0, d - log(low)), up = max(0, log(high) - d)
            return (exp(d - (down * down + w * w).squareRoot()), exp(d + (up * up + w * w).squareRoot()))
        }
        let (decisionLow, decisionHigh) = widened(tail: decisionTail)
        let (low, high) = reportInterval ? widened(tail: 0.025) : (decisionLow, decisionHigh)
        return Row(
            scenario: "", design: "", threads: 0, metric: metric, exact: false,
            baseline: ba.median, current: bb.median, ratio: ratio, ciLow: low, ciHigh: high,
            verdict: verdict(low: decisionLow, high: decisionHigh, minEffect: minEffect),
            decisionLow: decisionLow, decisionHigh: decisionHigh)
    }

    /// The timing rule (see the type's documentation), on the decision interval.
    public static func verdict(low: Double, high: Double, minEffect: Double) -> Verdict {
        let up = 1 + minEffect, down = 1 / (1 + minEffect)
        if low > 1 && high >= up { return .regression }
        if high < 1 && low <= down { return .improvement }
        if (low >= down && high <= up) || low > 1 || high < 1 { return .unchanged }
        return .tooNoisy
    }
}
