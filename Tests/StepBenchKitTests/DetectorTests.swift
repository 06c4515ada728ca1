import Foundation
import StepBenchScenarios
import Testing

@testable import StepBenchKit

/// Proof that `stepbench compare`'s timing detector is quiet and sensitive on the noise this
/// machine kind really has: synthetic A/A and A/B comparisons drawn from every committed noise
/// profile (results/<machine-id>/noise.json, measured by `scripts/regress --update-baseline`
/// from ten A/A runs of the regress timing run).
///
/// Each synthetic run of a (row, metric) draws the run's own drift, N(0, σ_drift²), and then
/// each repetition's log value from the measured per-repetition residuals (inverse CDF of the
/// profile's 101 quantiles): the skew and the outliers of this machine, not a normal model.
/// Both files of a comparison hold every (row, metric) of the profile, as the regress timing
/// comparison does, so the family-wise level applies exactly as it does there.
@Suite("The timing detector on this machine's measured noise")
struct DetectorTests {
    static let trials = Int(ProcessInfo.processInfo.environment["STEPBENCH_DETECTOR_TRIALS"] ?? "") ?? 1_000
    static let resultsFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("results")

    /// Every committed profile: `noise.json` (one run against a stored baseline, scripts/regress)
    /// and `noise-ab.json` (both builds interleaved in one session, scripts/abtest).
    static func profiles() throws -> [NoiseProfile] {
        let kinds = try FileManager.default.contentsOfDirectory(atPath: resultsFolder.path).sorted()
        return try kinds.flatMap { kind in
            try ["noise.json", "noise-ab.json"].compactMap { name in
                let url = resultsFolder.appendingPathComponent(kind).appendingPathComponent(name)
                return FileManager.default.fileExists(atPath: url.path) ? try NoiseProfile.read(url) : nil
            }
        }
    }

    static func isInterleaved(_ profile: NoiseProfile) -> Bool { profile.method == .interleavedProcesses }

    /// One synthetic run of `entry`: its repetitions, scaled by `factor`.
    static func sample(_ entry: NoiseProfile.Entry, factor: Double, rng: inout SplitMix64) -> [Double] {
        func uniform() -> Double { (Double(rng.next() >> 11) + 0.5) / Double(1 << 53) }
        let drift = entry.driftSD * (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform())
        let q = entry.residualQuantiles
        return (0..<entry.repetitions).map { _ in
            let position = uniform() * Double(q.count - 1)
            let i = min(Int(position), q.count - 2)
            let residual = q[i] + (q[i + 1] - q[i]) * (position - Double(i))
            return 100 * factor * exp(drift + residual)
        }
    }

    /// One synthetic comparison. For a single-run profile the drift allowance is not the true
    /// drift: as in reality, it is re-estimated in every trial from `profile.runs` synthetic A/A
    /// runs (between-run σ of their log-medians, less the sampling σ), and `compare` is told how
    /// many runs it came from.
    static func verdict(
        _ entry: NoiseProfile.Entry, in profile: NoiseProfile, slowdown: Double, tail: Double,
        rng: inout SplitMix64
    ) -> Comparison.Verdict {
        var drift = 0.0, runs: Int? = nil
        if !isInterleaved(profile) {
            // As `stepbench noise` estimates it from real runs: the between-run variance of the
            // runs' log-medians less their own sampling variance (RMS of each run's bootstrap),
            // both from these synthetic runs. (Subtracting the real runs' sampling σ instead
            // mixes two noise models: when the real runs' medians wobble more within a run than
            // i.i.d. draws from their pooled residuals do, it cancels the drift and under-allows.)
            let runsDrawn = (0..<profile.runs).map { _ in MedianBootstrap(sample(entry, factor: 1, rng: &rng)) }
            let medians = runsDrawn.map { log($0.median) }
            let mean = medians.reduce(0, +) / Double(medians.count)
            let between2 = medians.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(medians.count - 1)
            let sampling2 =
                runsDrawn.map { $0.logStandardDeviation * $0.logStandardDeviation }.reduce(0, +)
                / Double(runsDrawn.count)
            drift = max(0, between2 - sampling2).squareRoot()
            runs = profile.runs
        }
        let a = sample(entry, factor: 1, rng: &rng), b = sample(entry, factor: slowdown, rng: &rng)
        return Comparison.timing(
            entry.metric, baseline: a, current: b, driftSD: drift, driftRuns: runs, decisionTail: tail,
            minEffect: 0.05, reportInterval: false
        ).verdict
    }

    /// The metric a timing gate can trust on a shared VM: each design paired with its floor
    /// (see `Comparison`), for the designs one chooses among.
    static func isPaired(_ entry: NoiseProfile.Entry) -> Bool {
        entry.metric == .nsPerElementVsFloor && ["locked", "mutex", "atomic"].contains(entry.design)
    }

    /// Whether `compare` decides this entry (its row's primary metric, a design's row): the
    /// others are shown as information and cannot raise an alarm.
    static func isDecided(_ entry: NoiseProfile.Entry) -> Bool {
        guard let scenario = ScenarioKind(rawValue: entry.scenario), !scenario.isFloor else { return false }
        return entry.metric == scenario.primaryMetric
    }

    @Test("A/A: a false timing regression in at most 1% of 1,000 whole comparisons")
    func test_detector_aaFalseAlarmsAtMostOnePercent() throws {
        let profiles = try Self.profiles()
        try #require(!profiles.isEmpty, "no results/*/noise.json: run scripts/regress --update-baseline and commit it")
        for profile in profiles {
            // Under the complete null Holm's first step is Bonferroni's test over the decided rows,
            // so their family-wise rate is the Bonferroni rate simulated here.
            let decided = profile.entries.filter(Self.isDecided)
            try #require(!decided.isEmpty, "\(profile.machineId): the noise profile holds no decided row")
            let tail = Comparison.decisionTail(comparisons: decided.count)
            var rng = SplitMix64(seed: 0xA_A)
            var falseAlarms = 0, flaggedRows: [String: Int] = [:]
            for _ in 0..<Self.trials {
                var alarmed = false
                for entry in decided
                where Self.verdict(entry, in: profile, slowdown: 1, tail: tail, rng: &rng) == .regression {
                    alarmed = true
                    flaggedRows[entry.key, default: 0] += 1
                }
                if alarmed { falseAlarms += 1 }
            }
            print(
                "detector A/A on \(profile.machineId) \((profile.method ?? .singleRun).rawValue): \(falseAlarms) of \(Self.trials) comparisons (\(decided.count) decided timing rows each) raised a false regression \(flaggedRows)"
            )
            #expect(
                falseAlarms <= Self.trials / 100,
                "\(profile.machineId): \(falseAlarms) false alarms in \(Self.trials): \(flaggedRows)")
        }
    }

    /// The planted slowdown a row must catch in ≥ 95% of trials, if any: 30% on the paired rows
    /// of the interleaved protocol (scripts/abtest). The issue's target, 5%, is out of reach on
    /// the noise measured here, and one run against a stored baseline cannot promise even 30%
    /// (its paired rows drift 2–5% between runs, and that drift is itself only estimated from
    /// 10 runs): for it the power curve is printed, and only quietness and honesty are asserted.
    static func mustCatch(_ entry: NoiseProfile.Entry, in profile: NoiseProfile) -> Double? {
        isPaired(entry) && isInterleaved(profile) ? 1.30 : nil
    }

    /// On every decided row, a planted 5% slowdown is reported as a regression or as inconclusive,
    /// never as "unchanged" or "improvement" (the detector does not hide what it cannot see); and
    /// each row's `mustCatch` slowdown is caught. The fraction caught at 5%, 10%, 20% and
    /// 30% is printed for the record.
    @Test("A/B: planted slowdowns — caught where the noise allows, never called unchanged")
    func test_detector_plantedSlowdowns() throws {
        let profiles = try Self.profiles()
        try #require(!profiles.isEmpty, "no results/*/noise.json: run scripts/regress --update-baseline and commit it")
        for profile in profiles {
            // The decided rows only (the others are information), at the strictest Holm level.
            let decided = profile.entries.filter(Self.isDecided)
            let tail = Comparison.decisionTail(comparisons: decided.count)
            try #require(
                decided.contains(where: Self.isPaired), "\(profile.machineId): the profile has no paired rows")
            var rng = SplitMix64(seed: 0x5_10)
            for entry in decided {
                let required = Self.mustCatch(entry, in: profile)
                // The power curve on the paired rows only: a trial costs a few ms in debug.
                let slowdowns = Self.isPaired(entry) ? [1.05, 1.10, 1.20, 1.30] : [1.05]
                var caught: [Double: Int] = [:]
                var hidden = 0
                for slowdown in slowdowns {
                    var counts: [Comparison.Verdict: Int] = [:]
                    for _ in 0..<Self.trials {
                        counts[
                            Self.verdict(entry, in: profile, slowdown: slowdown, tail: tail, rng: &rng), default: 0] +=
                            1
                    }
                    caught[slowdown] = counts[.regression, default: 0]
                    if slowdown == 1.05 { hidden = counts[.unchanged, default: 0] + counts[.improvement, default: 0] }
                }
                print(
                    String(
                        format: "detector %@ %@ %@: caught of %d at %@ (drift σ %.2f%%, sampling σ %.2f%%)",
                        profile.machineId, (profile.method ?? .singleRun).rawValue, entry.key, Self.trials,
                        slowdowns.map { String(format: "+%.1f%%: %d", 100 * ($0 - 1), caught[$0]!) }.joined(
                            separator: ", "),
                        100 * entry.driftSD, 100 * entry.samplingSD))
                #expect(
                    hidden <= Self.trials * 5 / 100,
                    "\(entry.key): a 5% slowdown called unchanged/improvement \(hidden) times")
                let ordered = slowdowns.map { caught[$0]! }
                #expect(ordered == ordered.sorted(), "\(entry.key): a larger slowdown caught less often: \(ordered)")
                if let required {
                    #expect(
                        caught[required]! >= Self.trials * 95 / 100,
                        "\((profile.method ?? .singleRun).rawValue) \(entry.key): a \(String(format: "%.1f", (required - 1) * 100))% slowdown caught \(caught[required]!) of \(Self.trials)"
                    )
                }
            }
        }
    }
}
