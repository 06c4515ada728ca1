import Foundation
import StepBenchScenarios

extension Comparison {
    /// An A/B of adjacent processes, analysed as pairs (`stepbench compare --paired`, `scripts/abtest`):
    /// process i of A and process i of B ran back to back, so drift of the machine hits both
    /// alike. For each row both sides measured, its primary metric (``ScenarioKind/primaryMetric``)
    /// is taken per process (the median of its repetitions); the statistic is the log of B's over
    /// A's in each pair, and its interval the Student-t interval of their mean (the ratio shown is
    /// the geometric mean of the pairs' ratios).
    ///
    /// **Looks.** A session that looks after every batch and stops once each row is decided
    /// would raise its false-alarm rate with every look; here each of at most `looks` looks gets
    /// 1%/`looks` (Bonferroni over looks), and within a look the rows share it by Holm, as in
    /// ``compare(baseline:current:minEffect:noise:)``. Floor rows and rows with more threads than
    /// cores are shown, never decided.
    public static func paired(
        a: [ResultsFile], b: [ResultsFile], looks: Int = 1, minEffect: Double = defaultMinEffect
    ) throws -> Comparison {
        guard a.count == b.count, a.count >= 3 else {
            throw ResultsError(
                .missingInput,
                "paired: needs as many A files as B files, at least 3 pairs (got \(a.count) and \(b.count))")
        }
        let cores = b[0].machine.cores
        var rows: [Row] = []
        var logs: [[Double]] = []
        var decided: [Bool] = []
        for row in b[0].rows {
            let key = row.key
            func value(_ file: ResultsFile) -> (Metric, Double)? {
                guard let r = file.row(key) else { return nil }
                let samples = timingSamples(r, in: file)
                guard let metric = primaryMetric(key.scenario, among: samples.map(\.metric)),
                    let s = samples.first(where: { $0.metric == metric })
                else { return nil }
                return (metric, Statistics.median(s.samples))
            }
            let pairs = zip(a, b).map { (value($0), value($1)) }
            guard let metric = pairs.first?.1?.0,
                pairs.allSatisfy({ $0.0?.0 == metric && $0.1?.0 == metric })
            else { continue }
            logs.append(pairs.map { log($0.1!.1 / $0.0!.1) })
            let oversubscribed = cores > 0 && row.threads > cores
            decided.append(!oversubscribed && !key.scenario.isFloor)
            rows.append(
                Row(
                    key: MeasureKey(key, metric), exact: false, baseline: Statistics.median(pairs.map { $0.0!.1 }),
                    current: Statistics.median(pairs.map { $0.1!.1 }), ratio: nil, ciLow: nil, ciHigh: nil,
                    verdict: .information, oversubscribed: oversubscribed ? true : nil))
        }
        let alpha = familyWiseAlpha / Double(max(1, looks))
        let m = decided.filter { $0 }.count
        func interval(_ x: [Double], tail: Double) -> (Double, Double, Double) {
            Statistics.studentTInterval(ofLogs: x, tail: tail)
        }
        func p(_ x: [Double]) -> Double {
            Statistics.pValue { tail in
                let (_, low, high) = interval(x, tail: tail)
                return (low, high)
            }
        }
        let family = rows.indices.filter { decided[$0] }
        let familyP = family.map { p(logs[$0]) }
        let bonferroni = Statistics.bonferroniTail(alpha: alpha, family: m)
        var tails = [Double](repeating: bonferroni, count: rows.count)
        var pValues = [Double?](repeating: nil, count: rows.count)
        for (i, (tail, pValue)) in zip(family, zip(Statistics.holmTails(familyP, alpha: alpha), familyP)) {
            (tails[i], pValues[i]) = (tail, pValue)
        }
        for i in rows.indices {
            let (ratio, low, high) = interval(logs[i], tail: tails[i])
            let (_, low95, high95) = interval(logs[i], tail: 0.025)
            rows[i].ratio = ratio
            (rows[i].ciLow, rows[i].ciHigh) = (low95, high95)
            (rows[i].decisionLow, rows[i].decisionHigh) = (low, high)
            rows[i].pValue = pValues[i]
            rows[i].detectableEffect = Statistics.detectableEffect(
                ratio: ratio, decision: (low, high), ninetyFive: (low95, high95), minEffect: minEffect)
            if decided[i] { rows[i].verdict = verdict(low: low, high: high, minEffect: minEffect) }
        }
        return Comparison(
            baselineCommit: a[0].machine.gitCommit, currentCommit: b[0].machine.gitCommit, minEffect: minEffect,
            decisionLevel: 1 - 2 * bonferroni, noiseProfile: nil, rows: rows)
    }

    /// Whether every decided row of a comparison has a verdict other than inconclusive.
    public var isDecided: Bool { !rows.contains { $0.verdict == .inconclusive } }
}
