import Foundation
import StepBenchScenarios

/// `stepbench compare`: every (scenario, design, threads, metric) of two results files, with
/// the ratio current/baseline, its 95% confidence interval and a verdict.
///
/// Timing metrics use a percentile-bootstrap interval of the ratio of medians (each file's
/// repetitions resampled independently, 2,000 times, fixed seed). Why the bootstrap rather than
/// Mann–Whitney: benchmark repetitions here are skewed with occasional large outliers, and
/// Mann–Whitney's shift interpretation assumes both samples have the same shape; the bootstrap
/// assumes nothing about the shape and yields the interval of the *effect size* directly,
/// which is what the `--min-effect` rule needs. A timing verdict is:
/// - regression: the interval lies above 1 (significant) *and* the ratio exceeds 1 + min-effect;
/// - improvement: the mirror image;
/// - unchanged: the interval lies inside [1/(1+e), 1+e], or the change is significant but smaller
///   than the minimum effect;
/// - too noisy to tell: otherwise (the interval is wider than the band of effects that matter).
/// Allocations per element are exact counts: any increase of more than 0.01 per element (the
/// background noise of the runtime's own threads) is a regression. A combination that verified
/// in the baseline but failed in the current file is a regression too.
public struct Comparison: Codable, Equatable, Sendable {
    public enum Verdict: String, Codable, Sendable {
        case regression, improvement, unchanged
        case tooNoisy = "too-noisy"
        case failed
        case onlyInBaseline = "only-in-baseline"
        case onlyInCurrent = "only-in-current"
    }

    public struct Row: Codable, Equatable, Sendable {
        public var scenario: String
        public var design: String
        public var threads: Int
        public var metric: String
        public var exact: Bool
        public var baseline: Double?
        public var current: Double?
        public var ratio: Double?
        public var ciLow: Double?
        public var ciHigh: Double?
        public var verdict: Verdict
    }

    public var baselineCommit: String
    public var currentCommit: String
    public var minEffect: Double
    public var rows: [Row]

    public var regressions: [Row] { rows.filter { $0.verdict == .regression || $0.verdict == .failed } }
    /// Regressions in exact metrics only (instructions, allocations, failed verification): the CI gate.
    public var exactRegressions: [Row] { regressions.filter(\.exact) }

    static let timingMetrics: [(String, @Sendable (RepetitionResult) -> Double?)] = [
        ("ns_per_element", { $0.nsPerElement }),
        ("cpu_ns_per_element", { $0.cpuNsPerElement }),
        ("latency_p50", { $0.latency.map { Double($0.p50) } }),
        ("latency_p99", { $0.latency.map { Double($0.p99) } }),
    ]
    static let allocationTolerance = 0.01
    /// Instruction counts repeat to within ~0.2% per element for one binary (the two callgrind
    /// runs still differ a little in start-up work); an increase above 0.5% is a regression.
    static let instructionTolerance = 0.005

    public static func compare(baseline: ResultsFile, current: ResultsFile, minEffect: Double = 0.05,
                               resamples: Int = 2_000) -> Comparison {
        func key(_ r: ResultsFile.Row) -> String { "\(r.scenario.rawValue)|\(r.design)|\(r.threads)" }
        let base = Dictionary(baseline.rows.map { (key($0), $0) }, uniquingKeysWith: { a, _ in a })
        var rows: [Row] = []
        var seen = Set<String>()
        for cur in current.rows {
            seen.insert(key(cur))
            func row(_ metric: String, exact: Bool, verdict: Verdict) -> Row {
                Row(scenario: cur.scenario.rawValue, design: cur.design, threads: cur.threads, metric: metric,
                    exact: exact, baseline: nil, current: nil, ratio: nil, ciLow: nil, ciHigh: nil, verdict: verdict)
            }
            guard let old = base[key(cur)], old.status == "ok", !old.repetitions.isEmpty else {
                rows.append(row("all", exact: false, verdict: .onlyInCurrent))
                continue
            }
            guard cur.status == "ok", !cur.repetitions.isEmpty else {
                var r = row("verification", exact: true, verdict: .failed)
                r.ratio = nil
                rows.append(r)
                continue
            }
            for (name, value) in timingMetrics {
                let a = old.repetitions.compactMap(value), b = cur.repetitions.compactMap(value)
                guard !a.isEmpty, !b.isEmpty, a.count == old.repetitions.count, b.count == cur.repetitions.count else { continue }
                rows.append(timing(cur, name, baseline: a, current: b, minEffect: minEffect, resamples: resamples))
            }
            let a = Statistics.median(old.repetitions.map(\.allocationsPerElement))
            let b = Statistics.median(cur.repetitions.map(\.allocationsPerElement))
            let verdict: Verdict = b - a > allocationTolerance ? .regression : a - b > allocationTolerance ? .improvement : .unchanged
            rows.append(Row(scenario: cur.scenario.rawValue, design: cur.design, threads: cur.threads,
                            metric: "allocations_per_element", exact: true, baseline: a, current: b,
                            ratio: a > 0 ? b / a : nil, ciLow: nil, ciHigh: nil, verdict: verdict))
        }
        for old in baseline.rows where !seen.contains(key(old)) {
            rows.append(Row(scenario: old.scenario.rawValue, design: old.design, threads: old.threads, metric: "all",
                            exact: false, baseline: nil, current: nil, ratio: nil, ciLow: nil, ciHigh: nil,
                            verdict: .onlyInBaseline))
        }
        let oldProfiles = Dictionary((baseline.profiles ?? []).map { ("\($0.scenario.rawValue)|\($0.design)", $0) },
                                     uniquingKeysWith: { a, _ in a })
        for p in current.profiles ?? [] {
            guard let old = oldProfiles["\(p.scenario.rawValue)|\(p.design)"] else { continue }
            let ratio = p.instructionsPerElement / old.instructionsPerElement
            let verdict: Verdict = ratio > 1 + instructionTolerance ? .regression
                : ratio < 1 - instructionTolerance ? .improvement : .unchanged
            rows.append(Row(scenario: p.scenario.rawValue, design: p.design, threads: 1, metric: "instructions_per_element",
                            exact: true, baseline: old.instructionsPerElement, current: p.instructionsPerElement,
                            ratio: ratio, ciLow: nil, ciHigh: nil, verdict: verdict))
        }
        return Comparison(baselineCommit: baseline.machine.gitCommit, currentCommit: current.machine.gitCommit,
                          minEffect: minEffect, rows: rows)
    }

    static func timing(_ cur: ResultsFile.Row, _ metric: String, baseline a: [Double], current b: [Double],
                       minEffect: Double, resamples: Int) -> Row {
        let ratio = Statistics.median(b) / Statistics.median(a)
        let (low, high) = bootstrapRatioCI(baseline: a, current: b, resamples: resamples)
        return Row(scenario: cur.scenario.rawValue, design: cur.design, threads: cur.threads, metric: metric,
                   exact: false, baseline: Statistics.median(a), current: Statistics.median(b), ratio: ratio,
                   ciLow: low, ciHigh: high, verdict: verdict(ratio: ratio, low: low, high: high, minEffect: minEffect))
    }

    /// The timing rule (see the type's documentation).
    public static func verdict(ratio: Double, low: Double, high: Double, minEffect: Double) -> Verdict {
        let up = 1 + minEffect, down = 1 / (1 + minEffect)
        if low > 1 && ratio > up { return .regression }
        if high < 1 && ratio < down { return .improvement }
        if (low >= down && high <= up) || low > 1 || high < 1 { return .unchanged }
        return .tooNoisy
    }

    /// 95% percentile-bootstrap interval of median(current) / median(baseline).
    public static func bootstrapRatioCI(baseline a: [Double], current b: [Double], resamples: Int = 2_000,
                                        seed: UInt64 = 0xC0DE) -> (Double, Double) {
        var rng = SplitMix64(seed: seed)
        var ratios: [Double] = []
        ratios.reserveCapacity(resamples)
        var sa = a, sb = b
        for _ in 0..<resamples {
            for i in sa.indices { sa[i] = a[Int(rng.next() % UInt64(a.count))] }
            for i in sb.indices { sb[i] = b[Int(rng.next() % UInt64(b.count))] }
            ratios.append(Statistics.median(sb) / Statistics.median(sa))
        }
        return (Statistics.quantile(ratios, 0.025), Statistics.quantile(ratios, 0.975))
    }
}
