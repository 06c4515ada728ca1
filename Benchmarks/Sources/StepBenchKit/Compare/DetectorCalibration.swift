import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance

/// How `stepbench compare`'s timing detector behaves on one noise profile: synthetic A/A and
/// A/B comparisons drawn from the profile's measured noise (`stepbench noise calibrate`, run by
/// `scripts/regress --update-baseline` and `scripts/abtest --update-noise` after they write a
/// profile, into results/<machine-id>/calibration.json).
///
/// Each synthetic run of a (row, metric) draws the run's own drift, N(0, σ_drift²), then each
/// repetition's log value from the measured per-repetition residuals (inverse CDF of the
/// profile's 101 quantiles): the skew and the outliers of the machine, not a normal model. Every
/// comparison holds every decided row of the profile, as the gate's comparison does, so the
/// family-wise level applies exactly as it does there. The seeds are fixed: a calibration of one
/// profile with one number of trials is the same every time.
///
/// What it demands: false regressions in at most 1% of A/A comparisons; a planted 5% slowdown
/// on a decided row never called unchanged or an improvement in more than 5% of trials; a
/// larger slowdown never caught less often than a smaller one; and on an interleaved profile
/// (both builds in one session) a 30% slowdown of a paired row caught in at least 95%.
public struct DetectorCalibration: Codable, Equatable, Sendable {
    /// The slowdowns of the power curve on paired rows (the other decided rows: the first only).
    public static let slowdowns = [1.05, 1.10, 1.20, 1.30]
    /// The slowdown a paired row of an interleaved profile must catch in ≥ 95% of trials.
    public static let interleavedMustCatch = 1.30

    public struct Row: Codable, Equatable, Sendable {
        /// "scenario|design|threads|metric", as the noise profile names it.
        public var key: String
        public var driftSD: Double
        public var samplingSD: Double
        /// Trials (of `trials`) that called a regression, per planted slowdown.
        public var caught: [Caught]
        /// Trials in which a 5% slowdown was called unchanged or an improvement.
        public var hidden: Int
        /// The slowdown this row must catch in ≥ 95% of trials, if any.
        public var mustCatch: Double?
    }

    public struct Caught: Codable, Equatable, Sendable {
        public var slowdown: Double
        public var trials: Int
    }

    /// The noise profile's path as given, and the commit it was measured at.
    public var profile: String
    public var profileCommit: String
    public var machineId: String
    public var method: NoiseProfile.Method
    public var trials: Int
    /// A/A comparisons (of `trials`) in which some decided row was called a regression.
    public var falseAlarms: Int
    /// The rows that raised them, with how often.
    public var falseAlarmRows: [String: Int]
    public var rows: [Row]
    /// Each demand not met, in words; empty when the detector is calibrated.
    public var failures: [String]

    public var passed: Bool { failures.isEmpty }

    /// Whether `compare` decides this entry (its scenario's primary metric, a design's row): the
    /// others are shown as information and cannot raise an alarm.
    public static func isDecided(_ entry: NoiseProfile.Entry) -> Bool {
        !entry.scenario.isFloor && entry.metric == entry.scenario.primaryMetric
    }

    /// The metric a timing gate can trust on a shared VM: a design paired with its floor, for the
    /// designs one chooses among (synchronous, and not the reference port).
    public static func isPaired(_ entry: NoiseProfile.Entry) -> Bool {
        guard entry.metric == .nsPerElementVsFloor, let design = entry.design.design else {
            return false
        }
        return design.deliversSynchronously && design != .reference
    }

    /// Calibrates the detector on `profile` (named `name` in the result) with `trials` synthetic
    /// comparisons per question. Throws when the profile has no decided row to calibrate.
    public static func run(_ profile: NoiseProfile, name: String, trials: Int) throws -> DetectorCalibration {
        let decided = profile.entries.filter(isDecided)
        guard !decided.isEmpty, trials > 0 else {
            throw ResultsError(
                .missingInput,
                "\(name): the noise profile holds no decided timing row (a design's primary metric); measure one from A/A runs of this machine (`stepbench noise`)"
            )
        }
        let method = profile.method ?? .singleRun
        // Under the complete null Holm's first step is Bonferroni's test over the decided rows,
        // so their family-wise rate is the Bonferroni rate simulated here.
        let tail = Comparison.decisionTail(comparisons: decided.count)
        var calibration = DetectorCalibration(
            profile: name, profileCommit: profile.gitCommit, machineId: profile.machineId, method: method,
            trials: trials,
            falseAlarms: 0, falseAlarmRows: [:], rows: [], failures: [])
        var rng = SplitMix64(seed: 0xA_A)
        for _ in 0..<trials {
            var alarmed = false
            for entry in decided
            where verdict(entry, in: profile, slowdown: 1, tail: tail, rng: &rng) == .regression {
                alarmed = true
                calibration.falseAlarmRows[entry.key.label, default: 0] += 1
            }
            if alarmed { calibration.falseAlarms += 1 }
        }
        if calibration.falseAlarms > trials / 100 {
            calibration.failures.append(
                "A/A: \(calibration.falseAlarms) of \(trials) comparisons raised a false regression (at most \(trials / 100))"
            )
        }
        rng = SplitMix64(seed: 0x5_10)
        for entry in decided {
            let row = powerCurve(entry, in: profile, tail: tail, trials: trials, rng: &rng)
            calibration.rows.append(row)
            calibration.failures += failures(of: row, trials: trials)
        }
        return calibration
    }

    static func powerCurve(
        _ entry: NoiseProfile.Entry, in profile: NoiseProfile, tail: Double, trials: Int, rng: inout SplitMix64
    ) -> Row {
        let mustCatch = isPaired(entry) && profile.method == .interleavedProcesses ? interleavedMustCatch : nil
        var row = Row(
            key: entry.key.label, driftSD: entry.driftSD, samplingSD: entry.samplingSD, caught: [], hidden: 0,
            mustCatch: mustCatch)
        for slowdown in isPaired(entry) ? slowdowns : [slowdowns[0]] {
            var counts: [Comparison.Verdict: Int] = [:]
            for _ in 0..<trials {
                counts[verdict(entry, in: profile, slowdown: slowdown, tail: tail, rng: &rng), default: 0] += 1
            }
            row.caught.append(Caught(slowdown: slowdown, trials: counts[.regression, default: 0]))
            if slowdown == slowdowns[0] {
                row.hidden = counts[.unchanged, default: 0] + counts[.improvement, default: 0]
            }
        }
        return row
    }

    static func failures(of row: Row, trials: Int) -> [String] {
        var out: [String] = []
        if row.hidden > trials * 5 / 100 {
            out.append("\(row.key): a 5% slowdown called unchanged or an improvement in \(row.hidden) of \(trials)")
        }
        let counts = row.caught.map(\.trials)
        if counts != counts.sorted() { out.append("\(row.key): a larger slowdown caught less often: \(counts)") }
        if let required = row.mustCatch, let caught = row.caught.first(where: { $0.slowdown == required }),
            caught.trials < trials * 95 / 100
        {
            out.append(
                "\(row.key): a \(String(format: "%.0f", (required - 1) * 100))% slowdown caught in \(caught.trials) of \(trials) (at least 95%)"
            )
        }
        return out
    }

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
    /// runs (as `stepbench noise` estimates it: the between-run variance of the runs'
    /// log-medians less their own sampling variance), and `compare` is told how many runs it
    /// came from.
    static func verdict(
        _ entry: NoiseProfile.Entry, in profile: NoiseProfile, slowdown: Double, tail: Double,
        rng: inout SplitMix64
    ) -> Comparison.Verdict {
        var drift = 0.0
        var runs: Int? = nil
        if profile.method != .interleavedProcesses {
            let drawn = (0..<profile.runs).map { _ in MedianBootstrap(sample(entry, factor: 1, rng: &rng)) }
            drift =
                Statistics.driftEstimate(
                    logMedians: drawn.map { log($0.median) }, logStandardDeviations: drawn.map(\.logStandardDeviation)
                ).driftSD
            runs = profile.runs
        }
        let a = sample(entry, factor: 1, rng: &rng)
        let b = sample(entry, factor: slowdown, rng: &rng)
        return Comparison.timing(
            entry.key, baseline: a, current: b, driftSD: drift, driftRuns: runs, decisionTail: tail,
            minEffect: Comparison.defaultMinEffect, reportInterval: false
        ).verdict
    }
}

extension DetectorCalibration {
    /// `stepbench noise calibrate`'s output file: one calibration per noise profile.
    public struct File: Codable, Equatable, Sendable {
        public static let currentSchema = "stepbench-calibration/1"
        public var schema = currentSchema
        public var calibrations: [DetectorCalibration]

        public init(calibrations: [DetectorCalibration]) { self.calibrations = calibrations }

        public func write(to url: URL) throws {
            try ResultsFile.writeAtomically(try JSONOutput.encode(self), to: url)
        }
    }

    /// The calibration as a table: the A/A line, then each decided row's power curve.
    public var text: String {
        var out =
            "\(profile) (\(machineId), \(method.rawValue)): \(falseAlarms) of \(trials) A/A comparisons raised a false regression"
        if !falseAlarmRows.isEmpty {
            out +=
                " (" + falseAlarmRows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                + ")"
        }
        var table = [
            ["row", "drift σ", "sampling σ"] + Self.slowdowns.map { String(format: "+%.0f%%", 100 * ($0 - 1)) }
        ]
        for row in rows {
            table.append(
                [row.key, String(format: "%.2f%%", 100 * row.driftSD), String(format: "%.2f%%", 100 * row.samplingSD)]
                    + Self.slowdowns.map { s in row.caught.first { $0.slowdown == s }.map { "\($0.trials)" } ?? "–" })
        }
        out += "\ncaught of \(trials) trials, per planted slowdown:\n"
        out += TextTable(rows: table, alignment: { c, _ in c == 0 ? .left : .right }).render()
        out += failures.isEmpty ? "calibrated: every demand met\n" : failures.map { "NOT MET: \($0)\n" }.joined()
        return out
    }
}
