import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

extension ScenarioKind {
    /// The metric a timing comparison decides this scenario on (the type's family, see
    /// ``Comparison``): the paired ratio to the floor where there is a floor, so that drift of
    /// the whole machine cancels; latency where the elapsed time is mostly the harness's
    /// (cancel-race's rounds: wake-ups, latches, checks) or the timer's (pace-jitter), and for
    /// the floor-pingpong hand-off; ns/element for the other floors and direct-sync (which has none).
    public var primaryMetric: Metric {
        switch declaration.primary {
        case .latencyP50: .latencyP50
        case .ratioToFloor: .nsPerElementVsFloor
        case .nsPerElement: .nsPerElement
        }
    }

    /// The scenario's own count of the work around its elements, per element
    /// (``RepetitionResult/sideEvents``), if it keeps one.
    public var sideMetric: Metric? {
        switch declaration.side {
        case .staleCalls: .staleCallsPerElement
        case .inputsPerRound: .inputsPerRound
        case nil: nil
        }
    }
}

extension Comparison {
    /// A row's primary metric among those both files measured (``ScenarioKind/primaryMetric``;
    /// ns/element when the files lack it, e.g. a row measured without its floor).
    static func primaryMetric(_ scenario: ScenarioKind, among metrics: [Metric]) -> Metric? {
        metrics.contains(scenario.primaryMetric)
            ? scenario.primaryMetric : metrics.contains(.nsPerElement) ? .nsPerElement : nil
    }

    /// One timing metric of one row, measured in both files, waiting for its verdict.
    struct TimingCandidate {
        /// Where its row sits in the comparison's rows.
        var index: Int
        var baseline: [Double]
        var current: [Double]
        var driftSD: Double?
        /// Part of the decided family (the row's primary metric, not oversubscribed).
        var decided: Bool
    }

    /// Decides the candidates (see the type's documentation: Holm over the decided ones,
    /// `information` for the rest) and fills in their rows. Returns the family's size.
    static func decideTimings(
        _ candidates: [TimingCandidate], into rows: inout [Row], noise: NoiseProfile?, minEffect: Double
    ) -> Int {
        let family = candidates.filter(\.decided)
        let m = family.count
        let bonferroni = decisionTail(comparisons: m)
        func evidence(_ c: TimingCandidate) -> TimingEvidence {
            TimingEvidence(baseline: c.baseline, current: c.current, driftSD: c.driftSD ?? 0, driftRuns: noise?.runs)
        }
        func fill(_ c: TimingCandidate, tail: Double, decided: Bool, pValue: Double?) {
            var r = timing(
                rows[c.index].key, baseline: c.baseline, current: c.current, driftSD: c.driftSD ?? 0,
                driftRuns: noise?.runs, decisionTail: tail, minEffect: minEffect)
            r.driftSD = c.driftSD
            r.oversubscribed = rows[c.index].oversubscribed
            r.pValue = pValue
            if !decided {
                r.verdict = .information
            } else if c.driftSD == nil && (r.verdict == .regression || r.verdict == .improvement) {
                r.verdict = .noDriftEstimate
            }
            rows[c.index] = r
        }
        // Holm's step-down over the family (``Statistics/holmTails(_:alpha:)``).
        let pValues = family.map { evidence($0).pValue() }
        for (c, (tail, p)) in zip(family, zip(Statistics.holmTails(pValues, alpha: familyWiseAlpha), pValues)) {
            fill(c, tail: tail, decided: true, pValue: p)
        }
        for c in candidates where !c.decided {
            fill(c, tail: bonferroni, decided: false, pValue: nil)
        }
        return m
    }

    /// Whether `row`'s contention counts are fixed by the code: one thread runs a design that
    /// handles every event on the thread that drives it (or a floor), so nothing can contend.
    static func contentionIsExact(_ row: ResultsFile.Row) -> Bool {
        row.scenario.isSingleThreaded(threads: row.threads)
            && row.design.design?.traits.countsFollowTheSchedule != true
    }

    /// Two exact contention counts per element further apart than this differ (one event more
    /// in a hundred elements).
    static let contentionTolerance = 0.01

    /// The median over `row`'s counted repetitions of one contention count per element; nil
    /// when the row was not counted.
    static func contentionPerElement(_ row: ResultsFile.Row, _ count: (ContentionCounts) -> UInt64) -> Double? {
        let counted = row.repetitions.prefix(row.contentionRepetitions ?? 0)
        let values = counted.compactMap { r in r.contentionPerElement(count) }
        guard !values.isEmpty, values.count == counted.count else { return nil }
        return Statistics.median(values)
    }
}

/// The bootstrap evidence of one timing comparison: the two samples' medians, and the interval
/// of their ratio at any tail, widened by the between-run drift (see ``Comparison``).
struct TimingEvidence {
    let baseline: MedianBootstrap
    let current: MedianBootstrap
    let driftSD: Double
    let driftRuns: Int?
    var ratio: Double { current.median / baseline.median }

    init(baseline a: [Double], current b: [Double], driftSD: Double, driftRuns: Int?) {
        baseline = MedianBootstrap(a)
        current = MedianBootstrap(b)
        self.driftSD = driftSD
        self.driftRuns = driftRuns
    }

    /// The (low, high) quantiles at `tail` and 1 − `tail` of the ratio, drift included.
    func interval(tail: Double) -> (Double, Double) {
        let (low, high) = MedianBootstrap.ratioInterval(baseline: baseline, current: current, tail: tail)
        guard driftSD > 0 else { return (low, high) }
        let quantile =
            driftRuns.map { Statistics.studentTQuantile(1 - tail, degreesOfFreedom: max(1, $0 - 1)) }
            ?? Statistics.normalQuantile(1 - tail)
        let d = log(ratio), w = quantile * 2.0.squareRoot() * driftSD
        let down = max(0, d - log(low)), up = max(0, log(high) - d)
        return (exp(d - (down * down + w * w).squareRoot()), exp(d + (up * up + w * w).squareRoot()))
    }

    /// The two-sided p-value of "no change" (``Statistics/pValue(interval:)``).
    func pValue() -> Double { Statistics.pValue(interval: interval(tail:)) }

    /// The slowdown the decision interval would call a regression with 80% power (see
    /// ``Comparison``), as a fraction, never below `minEffect`.
    func detectableEffect(decision: (Double, Double), ninetyFive: (Double, Double), minEffect: Double) -> Double {
        Statistics.detectableEffect(ratio: ratio, decision: decision, ninetyFive: ninetyFive, minEffect: minEffect)
    }
}
