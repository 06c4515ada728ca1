import Foundation
import StepBenchScenarios

/// How much a timing metric moves on one machine kind when nothing changed: measured from
/// several A/A runs of one build (`stepbench noise RUN…`, written by `scripts/regress
/// --update-baseline` next to the baseline) and used by `stepbench compare --noise`.
///
/// A repetition's bootstrap only sees the noise *within* a run. Between runs on a shared VM the
/// whole machine drifts as well (the neighbours change, and with them cache and memory
/// bandwidth), by far more than a run's own interval, and by different amounts at different
/// times (docs/METHOD.md and the committed noise profiles show how much). For each
/// (scenario, design, threads, metric) the profile keeps
/// - `samplingSD`: the bootstrap standard deviation of a run's log-median (root mean square
///   over the runs) — the part the bootstrap already accounts for;
/// - `betweenSD`: the standard deviation of the runs' log-medians — everything;
/// - `driftSD = √max(0, betweenSD² − samplingSD²)`: the part it does not, which `compare` adds;
/// - `residualQuantiles`: 101 quantiles of every repetition's log value minus its run's
///   log-median, pooled — this machine's per-repetition noise, for the synthetic trials of
///   ``DetectorCalibration``.
public struct NoiseProfile: Codable, Equatable, Sendable {
    public static let currentSchema = "stepbench-noise/1"

    public struct Entry: Codable, Equatable, Sendable {
        /// What the entry measured (the file writes it field by field, as results files do).
        public var key: MeasureKey
        public var repetitions: Int
        public var samplingSD: Double
        public var betweenSD: Double
        public var driftSD: Double
        public var residualQuantiles: [Double]

        public var metric: Metric { key.metric }
        public var scenario: ScenarioKind { row.scenario }
        public var design: Subject { key.subject }
        public var threads: Int { key.threads }

        /// The row this entry measured.
        public var row: RowKey { key.row! }

        public init(
            key: MeasureKey, repetitions: Int, samplingSD: Double, betweenSD: Double, driftSD: Double,
            residualQuantiles: [Double]
        ) {
            precondition(key.row != nil, "a noise profile measures scenarios' rows, not paths")
            self.key = key
            self.repetitions = repetitions
            (self.samplingSD, self.betweenSD, self.driftSD) = (samplingSD, betweenSD, driftSD)
            self.residualQuantiles = residualQuantiles
        }

        private enum CodingKeys: String, CodingKey {
            case repetitions, samplingSD, betweenSD, driftSD, residualQuantiles
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let key = try MeasureKey(fields: decoder)
            guard key.row != nil else {
                throw DecodingError.dataCorruptedError(
                    forKey: .repetitions, in: c,
                    debugDescription: "a noise profile entry of a path (\(key.target.name))")
            }
            self.init(
                key: key, repetitions: try c.decode(Int.self, forKey: .repetitions),
                samplingSD: try c.decode(Double.self, forKey: .samplingSD),
                betweenSD: try c.decode(Double.self, forKey: .betweenSD),
                driftSD: try c.decode(Double.self, forKey: .driftSD),
                residualQuantiles: try c.decode([Double].self, forKey: .residualQuantiles))
        }

        public func encode(to encoder: any Encoder) throws {
            try key.encodeFields(to: encoder)
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(repetitions, forKey: .repetitions)
            try c.encode(samplingSD, forKey: .samplingSD)
            try c.encode(betweenSD, forKey: .betweenSD)
            try c.encode(driftSD, forKey: .driftSD)
            try c.encode(residualQuantiles, forKey: .residualQuantiles)
        }
    }

    public var schema: String
    public var machineId: String
    public var gitCommit: String
    public var createdAt: String
    public var runs: Int
    /// How the comparisons this profile describes are made (nil in older files: single-run).
    public var method: Method? = nil

    public enum Method: String, Codable, Sendable {
        /// One run against a stored baseline (`stepbench noise`).
        case singleRun = "single-run"
        /// `scripts/abtest`: both builds' processes interleaved in one session, each side merged
        /// per process (`stepbench noise --interleaved`).
        case interleavedProcesses = "interleaved-processes"
    }
    public var entries: [Entry]

    /// The between-run drift of what `key` measures, if the profile measured it.
    public func driftSD(_ key: MeasureKey) -> Double? {
        entries.first { $0.key == key }?.driftSD
    }

    /// Builds the profile from A/A runs: the same build and configuration, separate processes.
    public static func measure(runs: [ResultsFile]) throws -> NoiseProfile {
        guard runs.count >= 3 else {
            throw ResultsError(
                .missingInput,
                "a noise profile needs at least 3 A/A runs of one build (got \(runs.count)); between-run drift cannot be estimated from fewer"
            )
        }
        if let merged = runs.first(where: { $0.aggregation != nil }) {  // per-process rows, a combination of them too
            throw ResultsError(
                .wrongKind,
                "a single-run noise profile needs the runs themselves, not merged files (\(merged.aggregation ?? "merged")); profile a scripts/abtest session as interleaved processes instead"
            )
        }
        let machine = runs[0].machine
        for run in runs where run.machine.machineID != machine.machineID {
            throw ResultsError(
                .incompatible,
                "the A/A runs come from different machine kinds (\(machine.machineID), \(run.machine.machineID)); a noise profile is per machine kind"
            )
        }
        var entries: [Entry] = []
        for row in runs[0].rows where row.status == .ok {
            let others = try runs.map { run in
                guard let other = run.row(row.key), other.status == .ok else {
                    throw ResultsError(
                        .incompatible,
                        "run \(run.machine.gitCommit.prefix(10)) at \(run.createdAt) lacks \(row.key) (or it did not finish); A/A runs must share one configuration"
                    )
                }
                return Comparison.timingSamples(other, in: run)
            }
            // A metric is profiled where every run has positive samples of it: a count that is
            // 0 in some repetition (a one-thread row is rarely preempted) has no log scale, and
            // compare says it has no drift estimate for it instead.
            metrics: for (metric, _) in Comparison.timingSamples(row, in: runs[0]) {
                var logMedians: [Double] = [], logSDs: [Double] = [], residuals: [Double] = []
                var repetitions = 0
                for samplesOfRun in others {
                    guard let samples = samplesOfRun.first(where: { $0.metric == metric })?.samples else {
                        continue metrics
                    }
                    let logMedian = log(Statistics.median(samples))
                    logMedians.append(logMedian)
                    logSDs.append(MedianBootstrap(samples).logStandardDeviation)
                    residuals += samples.map { log($0) - logMedian }
                    repetitions = samples.count
                }
                let (between, sampling, drift) = Statistics.driftEstimate(
                    logMedians: logMedians, logStandardDeviations: logSDs)
                entries.append(
                    Entry(
                        key: MeasureKey(row.key, metric), repetitions: repetitions, samplingSD: sampling,
                        betweenSD: between, driftSD: drift,
                        residualQuantiles: (0...100).map { Statistics.quantile(residuals, Double($0) / 100) }))
            }
        }
        return NoiseProfile(
            schema: currentSchema, machineId: machine.machineID, gitCommit: machine.gitCommit,
            createdAt: ISO8601DateFormatter().string(from: Date()), runs: runs.count, entries: entries)
    }

    /// The profile of the interleaved protocol, from an A/A session: `processes` are the runs of
    /// one build (both "sides"), each one process. A process's value of a metric is the median
    /// of its repetitions; residuals are taken around the session's median, so any slow drift
    /// inside the session stays in them (interleaving cancels it between the sides, the
    /// synthetic trials do not assume so). `samplesPerSide` processes make one side.
    public static func measureInterleaved(processes: [ResultsFile], samplesPerSide: Int) throws -> NoiseProfile {
        guard processes.count >= 6, samplesPerSide >= 3, processes.count == 2 * samplesPerSide else {
            throw ResultsError(
                .missingInput,
                "an interleaved noise profile needs both sides' processes: 2 × \(samplesPerSide) files, at least 3 per side (got \(processes.count))"
            )
        }
        let merged = try ResultsFile.mergedPerProcess(processes)
        var entries: [Entry] = []
        for row in merged.rows where row.status == .ok {
            for (metric, values) in Comparison.timingSamples(row, in: merged) where values.allSatisfy({ $0 > 0 }) {
                let logs = values.map { log($0) }
                let center = Statistics.median(logs)
                let residuals = logs.map { $0 - center }
                let between = (residuals.map { $0 * $0 }.reduce(0, +) / Double(residuals.count - 1)).squareRoot()
                entries.append(
                    Entry(
                        key: MeasureKey(row.key, metric), repetitions: samplesPerSide,
                        // sd of a median of K processes: 1.2533·σ/√K, σ from the residuals' MAD (the
                        // bootstrap of 20 values understates it: their median has few distinct values).
                        samplingSD: 1.2533 * 1.4826 * Statistics.median(residuals.map(abs))
                            / Double(samplesPerSide).squareRoot(),
                        betweenSD: between, driftSD: 0,
                        residualQuantiles: (0...100).map { Statistics.quantile(residuals, Double($0) / 100) }))
            }
        }
        var profile = NoiseProfile(
            schema: currentSchema, machineId: merged.machine.machineID, gitCommit: merged.machine.gitCommit,
            createdAt: ISO8601DateFormatter().string(from: Date()), runs: processes.count, entries: entries)
        profile.method = .interleavedProcesses
        return profile
    }

    /// Where a command looks for the noise profile it was not given, written once (`compare`,
    /// `series`; the report passes the first): `noise.json` in `folder`, the folder the results
    /// come from; else, when `machineID` is given, `results/<machine-id>/noise.json` under the
    /// working directory (a checkout's committed profile). The candidates in that order, and the
    /// first that exists (nil: none).
    public static func defaultPath(besides folder: String, machineID: String? = nil) -> (
        found: String?, looked: [String]
    ) {
        var candidates = [(folder as NSString).appendingPathComponent("noise.json")]
        if let machineID {
            let committed = "results/\(machineID)/noise.json"
            if URL(fileURLWithPath: committed).standardizedFileURL
                != URL(fileURLWithPath: candidates[0])
                .standardizedFileURL
            {
                candidates.append(committed)
            }
        }
        return (candidates.first { FileManager.default.fileExists(atPath: $0) }, candidates)
    }

    public static func read(_ url: URL) throws -> NoiseProfile {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ResultsError(
                .unreadable,
                "\(url.path): cannot read the noise profile (\(error.localizedDescription)); write one from A/A runs of this machine with `stepbench noise`"
            )
        }
        let profile: NoiseProfile
        do { profile = try JSONDecoder().decode(NoiseProfile.self, from: data) } catch {
            // of this schema but broken: malformed; anything else is another document
            struct Header: Decodable { var schema: String? }
            let schema = (try? JSONDecoder().decode(Header.self, from: data))?.schema
            throw ResultsError(
                schema == currentSchema ? .malformed : .wrongKind, "\(url.path): not a noise profile (\(error))")
        }
        guard profile.schema == currentSchema else {
            throw ResultsError(.wrongKind, "\(url.path): schema '\(profile.schema)', expected '\(currentSchema)'")
        }
        return profile
    }

    public func write(to url: URL) throws {
        try ResultsFile.writeAtomically(try JSONOutput.encode(self), to: url)
    }
}
