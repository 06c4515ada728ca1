import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

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
/// **Family.** One timing metric decides each (scenario, design, threads): the scenario's
/// primary metric (``ScenarioKind/primaryMetric``, e.g. the paired ratio to the floor, or
/// cancel-race's latency), else ns/element. The other timing columns are derived from the same
/// repetitions and are shown as `information`, with their interval and detectable effect, as are
/// rows that ran more threads than the machine has cores (oversubscribed: spinning threads then
/// wait for the scheduler, which rewards designs that block), and floor rows: a floor measures
/// the harness and the machine, and what changed in a design shows in its paired ratio. The m
/// decided rows share a family-wise false-alarm rate of 1% by Holm's step-down: ordered by
/// p-value, the k-th is decided at level 1 − 1%/(m − k + 1) until the first that is not
/// significant; it and every later row are decided at Bonferroni's 1 − 1%/m and cannot be
/// significant. The rate holds while the drift model does: runs that jump between two speeds
/// (a debug build's layouts) can defeat an allowance estimated from a few runs.
///
/// **Verdict.** With e = `--min-effect`, on the row's family-wise (decision) interval:
/// - regression: the interval lies above 1 (significant) *and* reaches 1 + e (an effect of e is
///   not excluded). Requiring the *point estimate* to pass 1 + e instead would catch a true
///   slowdown of exactly e only half the time;
/// - improvement: the mirror image (below 1, reaching 1/(1+e));
/// - unchanged: the interval lies inside [1/(1+e), 1+e], or the change is significant but shown
///   smaller than e;
/// - inconclusive: otherwise (the interval spans 1 and effects that matter).
/// The reported "95% CI" is the two-sided 95% interval, widened by drift alike.
///
/// **Power.** Every timing row states its detectable effect: the slowdown its decision interval
/// would call a regression with 80% power, exp(h + z₀.₈·σ) − 1 with h the decision interval's
/// half-width and σ = h₉₅/1.96 the standard error, both in log space (never below e). A quick
/// run that cannot tell says how large a change it could have seen.
///
/// **No drift estimate.** A row whose drift between runs is unknown (no noise profile, or the
/// noise profile did not measure that row and metric) cannot be called a regression or an
/// improvement on timing alone: the within-run bootstrap does not see how far a whole run
/// drifts, which on a shared VM is far more than its own interval. Such a row says
/// `no-drift-estimate` where it would have said regression or improvement.
///
/// Allocations per element are exact counts where the scenario declares them so
/// (``ScenarioKind/allocationTolerance(for:)``): an increase beyond that tolerance is a
/// regression. Where thread timing decides the count (the actors, pace-jitter), it is compared
/// like a timing metric. Instructions per element and per event (callgrind) are exact for one
/// binary: an increase of more than 0.5% is a regression; so is one of more than 0.5 in a path's
/// synchronising instructions or allocations per event. A combination that verified in the
/// baseline but failed in the current file is a regression too.
public struct Comparison: Codable, Equatable, Sendable {
    public enum Verdict: String, Codable, Sendable {
        case regression, improvement, unchanged
        /// The interval spans both "no change" and changes that matter: this comparison could
        /// not tell (``Row/detectableEffect`` says what it could have seen).
        case inconclusive
        /// Shown, not decided: a metric other than its row's primary one, a floor row, or a row
        /// whose threads outnumber the machine's cores (see the type's documentation).
        case information
        case failed
        case onlyInBaseline = "only-in-baseline"
        case onlyInCurrent = "only-in-current"
        /// A timing change the bootstrap sees, with no between-run drift estimate for the row:
        /// not evidence of a regression (see the type's documentation).
        case noDriftEstimate = "no-drift-estimate"
    }

    public struct Row: Codable, Equatable, Sendable {
        /// What the row compared (written field by field: the scenario column names the path
        /// for a path's count).
        public var key: MeasureKey
        public var scenario: String { key.target.name }
        public var design: String { key.subject.name }
        public var threads: Int { key.threads }
        public var metric: Metric { key.metric }
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
        /// Timing metrics: the smallest slowdown this comparison would call a regression with
        /// 80% power (as a fraction: 0.12 is 12%), never below the minimum effect.
        public var detectableEffect: Double? = nil
        /// Timing metrics: the smallest family-wise level at which the change is significant
        /// (two-sided p-value of "no change", drift included).
        public var pValue: Double? = nil
        /// The row ran more threads than the machine has cores: shown, never decided.
        public var oversubscribed: Bool? = nil

        public init(
            key: MeasureKey, exact: Bool, baseline: Double?, current: Double?, ratio: Double?, ciLow: Double?,
            ciHigh: Double?, verdict: Verdict, decisionLow: Double? = nil, decisionHigh: Double? = nil,
            driftSD: Double? = nil, detectableEffect: Double? = nil, pValue: Double? = nil, oversubscribed: Bool? = nil
        ) {
            self.key = key
            self.exact = exact
            (self.baseline, self.current, self.ratio, self.ciLow, self.ciHigh) = (
                baseline, current, ratio, ciLow, ciHigh
            )
            self.verdict = verdict
            (self.decisionLow, self.decisionHigh, self.driftSD) = (decisionLow, decisionHigh, driftSD)
            (self.detectableEffect, self.pValue, self.oversubscribed) = (detectableEffect, pValue, oversubscribed)
        }

        private enum CodingKeys: String, CodingKey {
            case exact, baseline, current, ratio, ciLow, ciHigh, verdict, decisionLow, decisionHigh, driftSD
            case detectableEffect, pValue, oversubscribed
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                key: try MeasureKey(fields: decoder), exact: try c.decode(Bool.self, forKey: .exact),
                baseline: try c.decodeIfPresent(Double.self, forKey: .baseline),
                current: try c.decodeIfPresent(Double.self, forKey: .current),
                ratio: try c.decodeIfPresent(Double.self, forKey: .ratio),
                ciLow: try c.decodeIfPresent(Double.self, forKey: .ciLow),
                ciHigh: try c.decodeIfPresent(Double.self, forKey: .ciHigh),
                verdict: try c.decode(Verdict.self, forKey: .verdict),
                decisionLow: try c.decodeIfPresent(Double.self, forKey: .decisionLow),
                decisionHigh: try c.decodeIfPresent(Double.self, forKey: .decisionHigh),
                driftSD: try c.decodeIfPresent(Double.self, forKey: .driftSD),
                detectableEffect: try c.decodeIfPresent(Double.self, forKey: .detectableEffect),
                pValue: try c.decodeIfPresent(Double.self, forKey: .pValue),
                oversubscribed: try c.decodeIfPresent(Bool.self, forKey: .oversubscribed))
        }

        public func encode(to encoder: any Encoder) throws {
            try key.encodeFields(to: encoder)
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(exact, forKey: .exact)
            try c.encodeIfPresent(baseline, forKey: .baseline)
            try c.encodeIfPresent(current, forKey: .current)
            try c.encodeIfPresent(ratio, forKey: .ratio)
            try c.encodeIfPresent(ciLow, forKey: .ciLow)
            try c.encodeIfPresent(ciHigh, forKey: .ciHigh)
            try c.encode(verdict, forKey: .verdict)
            try c.encodeIfPresent(decisionLow, forKey: .decisionLow)
            try c.encodeIfPresent(decisionHigh, forKey: .decisionHigh)
            try c.encodeIfPresent(driftSD, forKey: .driftSD)
            try c.encodeIfPresent(detectableEffect, forKey: .detectableEffect)
            try c.encodeIfPresent(pValue, forKey: .pValue)
            try c.encodeIfPresent(oversubscribed, forKey: .oversubscribed)
        }
    }

    public var baselineCommit: String
    public var currentCommit: String
    public var minEffect: Double
    /// Level of each timing comparison's decision interval: 1 − 1%/m over m timing comparisons.
    public var decisionLevel: Double
    /// The machine kind of the noise profile used (nil: bootstrap only, no drift allowance).
    public var noiseProfile: String?
    public var rows: [Row]
    /// Where each moved exact count went (``attributions(_:_:)``); absent when the files hold
    /// no whole profiles on both sides.
    public var attributions: [Attribution]? = nil

    public var regressions: [Row] { rows.filter { $0.verdict == .regression || $0.verdict == .failed } }
    /// Regressions in exact metrics only (instructions, allocations, failed verification), and
    /// anything exact the baseline measured that the current file no longer does (a gate that
    /// silently stops checking a row is no gate; a row whose count it never gated may go): the CI
    /// gate.
    public var exactRegressions: [Row] {
        regressions.filter(\.exact) + rows.filter { $0.verdict == .onlyInBaseline && $0.exact }
    }

    /// The comparison of the exact metrics alone (`compare --exact-only`, the gate): timing rows
    /// are not judged there, so they are left out, but a row on one side only stays.
    public var exactOnly: Comparison {
        var exact = self
        exact.rows.removeAll { !$0.exact && $0.verdict != .onlyInBaseline && $0.verdict != .onlyInCurrent }
        return exact
    }

    static let timingMetrics: [(Metric, @Sendable (RepetitionResult) -> Double?)] = [
        (.nsPerElement, { $0.nsPerElement }),
        (.cpuNsPerElement, { $0.cpuNsPerElement }),
        (.latencyP50, { $0.latency.map { Double($0.p50) } }),
        (.latencyP99, { $0.latency.map { Double($0.p99) } }),
    ]
    /// The smallest timing change a comparison calls (5%): `compare`, `paired`, the calibration
    /// and the history's default.
    public static let defaultMinEffect = 0.05
    /// Family-wise false-alarm rate of a whole timing comparison.
    public static let familyWiseAlpha = 0.01

    /// Each tail of the decision interval when `comparisons` timing comparisons share the
    /// family-wise rate (``Statistics/bonferroniTail(alpha:family:)``).
    public static func decisionTail(comparisons: Int) -> Double {
        Statistics.bonferroniTail(alpha: familyWiseAlpha, family: comparisons)
    }

    /// For rows of scenarios this tool no longer declares a tolerance for.
    static let allocationTolerance = 0.01

    /// How far two exact allocation counts per element of `row` may lie apart: its scenario's
    /// tolerance for its design (``ScenarioKind/allocationTolerance(for:)``), else the default.
    static func allocationTolerance(of row: RowKey) -> Double {
        row.scenario.allocationTolerance(for: row.design) ?? allocationTolerance
    }
    /// Instruction counts repeat exactly for one binary inside the measured window; an
    /// increase above 0.5% is a regression (a different binary moves code, and the count a
    /// little, without a change of the design).
    static let instructionTolerance = 0.005
    /// The least tolerance of a design whose counts follow the schedule
    /// (``SteppingDesign/Traits/countsFollowTheSchedule``): how often its threads park and wake
    /// moves its instructions as much as its code does (mpsc-channel's direct-sync count spread
    /// 3.1% across three fresh clones of one commit, 20bf88c).
    static let scheduleInstructionTolerance = 0.05

    /// One timing comparison of `metric` (scenario, design and threads left blank for the
    /// caller): the ratio of medians, the 95% interval and the decision interval, both widened
    /// by `driftSD`.
    /// `reportInterval: false` skips the 95% interval (the synthetic trials need only the verdict).
    /// `driftRuns`: how many A/A runs `driftSD` was estimated from (nil: known exactly).
    public static func timing(
        _ key: MeasureKey, baseline a: [Double], current b: [Double], driftSD: Double,
        driftRuns: Int? = nil, decisionTail: Double, minEffect: Double,
        reportInterval: Bool = true
    ) -> Row {
        let evidence = TimingEvidence(baseline: a, current: b, driftSD: driftSD, driftRuns: driftRuns)
        let (decisionLow, decisionHigh) = evidence.interval(tail: decisionTail)
        let (low, high) = reportInterval ? evidence.interval(tail: 0.025) : (decisionLow, decisionHigh)
        var row = Row(
            key: key, exact: false,
            baseline: evidence.baseline.median, current: evidence.current.median, ratio: evidence.ratio,
            ciLow: low, ciHigh: high,
            verdict: verdict(low: decisionLow, high: decisionHigh, minEffect: minEffect),
            decisionLow: decisionLow, decisionHigh: decisionHigh)
        if reportInterval {
            row.detectableEffect = evidence.detectableEffect(
                decision: (decisionLow, decisionHigh), ninetyFive: (low, high), minEffect: minEffect)
        }
        return row
    }

    /// The timing rule (see the type's documentation), on the decision interval.
    public static func verdict(low: Double, high: Double, minEffect: Double) -> Verdict {
        let up = 1 + minEffect, down = 1 / (1 + minEffect)
        if low > 1 && high >= up { return .regression }
        if high < 1 && low <= down { return .improvement }
        if (low >= down && high <= up) || low > 1 || high < 1 { return .unchanged }
        return .inconclusive
    }
}
