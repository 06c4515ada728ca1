import Foundation
import StepBenchScenarios

/// Exports a results file for tools that already exist: spreadsheets (CSV), the
/// `customSmallerIsBetter` JSON that github-action-benchmark and Bencher ingest, and InfluxDB
/// line protocol for a time-series database fed by a fleet of CI machines.
public enum ExportFormat: String, CaseIterable, Sendable {
    case csv
    case githubActionBenchmark = "github-action-benchmark"
    case influx
}

public enum Exporter {
    /// One exported figure: a metric of one (scenario, design, threads) row, or of one path's
    /// exact counts (`kind` `.path`: `scenario` names the path, threads 1).
    public struct Figure: Equatable, Sendable {
        /// What the figure measures: a scenario's row, or a path's exact counts.
        public enum Kind: String, Sendable { case scenario, path }
        public var kind: Kind = .scenario
        /// An exact count (`stepbench profile`): one value, no interval.
        public var exact = false
        public var scenario: String
        public var design: String
        public var threads: Int
        public var metric: Metric
        public var median: Double
        public var ciLow: Double
        public var ciHigh: Double

        public var name: String { metric.rawValue }
        public var unit: String { metric.unit }
        public var smallerIsBetter: Bool { metric.smallerIsBetter }
    }

    /// Every summary figure of every successful row, in file order, then a profile file's exact
    /// counts: each profiled scenario's instructions per element, each path's counts per event.
    public static func figures(_ file: ResultsFile) -> [Figure] {
        var out: [Figure] = []
        for row in file.rows {
            guard let s = row.summary else { continue }
            func add(_ metric: Metric, _ e: ResultsFile.Estimate?) {
                guard let e else { return }
                out.append(
                    Figure(
                        scenario: row.scenario.rawValue, design: row.design.name, threads: row.threads, metric: metric,
                        median: e.median, ciLow: e.ciLow, ciHigh: e.ciHigh))
            }
            add(.nsPerElement, s.nsPerElement)
            add(.elementsPerSecond, s.elementsPerSecond)
            add(.allocationsPerElement, s.allocationsPerElement)
            add(.cpuNsPerElement, s.cpuNsPerElement)
            add(.latencyP50, s.latencyP50)
            add(.latencyP90, s.latencyP90)
            add(.latencyP99, s.latencyP99)
            add(.latencyP999, s.latencyP999)
            add(.latencyMax, s.latencyMax)
        }
        // The exact counts of `stepbench profile`: one value, no interval.
        for p in file.profiles ?? [] {
            out.append(
                Figure(
                    exact: true, scenario: p.scenario.rawValue, design: p.design.name, threads: 1,
                    metric: .instructionsPerElement,
                    median: p.instructionsPerElement, ciLow: p.instructionsPerElement, ciHigh: p.instructionsPerElement)
            )
        }
        for p in file.paths ?? [] {
            for (metric, value) in [
                (Metric.instructionsPerEvent, p.instructionsPerEvent),
                (.synchronisingPerEvent, p.synchronisingPerEvent),
                (.allocationsPerEvent, p.allocationsPerEvent),
            ] {
                out.append(
                    Figure(
                        kind: .path, exact: true, scenario: p.path.rawValue, design: p.design.name, threads: 1,
                        metric: metric,
                        median: value, ciLow: value, ciHigh: value))
            }
        }
        return out
    }

    public static func export(_ file: ResultsFile, as format: ExportFormat) throws -> String {
        switch format {
        case .csv: return csv(file)
        case .githubActionBenchmark: return try githubActionBenchmark(file)
        case .influx: return try influx(file)
        }
    }

    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    public static func csv(_ file: ResultsFile) -> String {
        var lines = [
            "scenario,design,threads,metric,unit,median,ci_low,ci_high,repetitions,machine,commit,created_at,kind"
        ]
        for m in figures(file) {
            lines.append(
                [
                    m.scenario, m.design, String(m.threads), m.name, m.unit, number(m.median), number(m.ciLow),
                    number(m.ciHigh), String(file.configuration.repetitions), file.machine.machineID,
                    file.machine.gitCommit, file.createdAt, m.kind.rawValue,
                ].joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// github-action-benchmark `customSmallerIsBetter`: smaller-is-better figures only.
    public struct BenchmarkEntry: Codable, Equatable {
        public var name: String
        public var unit: String
        public var value: Double
        public var range: String
        public var extra: String
    }

    public static func githubActionBenchmark(_ file: ResultsFile) throws -> String {
        let entries = figures(file).filter(\.smallerIsBetter).map { m in
            BenchmarkEntry(
                name: "\(m.kind == .path ? "path:" : "")\(m.scenario) \(m.design) x\(m.threads) \(m.name)",
                unit: m.unit,
                value: m.median,
                range: "± \(number((m.ciHigh - m.ciLow) / 2))",
                extra: (m.exact
                    ? "exact (callgrind and jemalloc counts)"
                    : "95% CI [\(number(m.ciLow)), \(number(m.ciHigh))]; \(file.configuration.repetitions) repetitions")
                    + "; commit \(file.machine.gitCommit.prefix(10)); \(file.machine.machineID)"
            )
        }
        return try JSONOutput.string(entries) + "\n"
    }

    /// InfluxDB line protocol: one point per row, tags machine/scenario/design/threads, one
    /// field per metric (median), timestamped with the run's start (ns, whole seconds); a path's
    /// exact counts are points of `stepbench_path`, tagged machine/path/design.
    /// A `createdAt` that is not an ISO 8601 time is an error: any fallback time would put every
    /// such run of a machine kind on the same point, each push overwriting the one before.
    public static func influx(_ file: ResultsFile) throws -> String {
        guard let start = ResultsFile.date(createdAt: file.createdAt) else {
            throw ResultsError(
                "createdAt '\(file.createdAt)' is not an ISO 8601 time such as 2026-11-22T20:21:16Z; InfluxDB points are stamped with the run's start"
            )
        }
        let timestamp = Int64(start.timeIntervalSince1970.rounded(.down)) * 1_000_000_000
        var points: [String] = []
        var grouped: [(key: String, fields: [String])] = []
        for m in figures(file) {
            // a path's counts: their own measurement, tagged by path
            let key =
                m.kind == .path
                ? "stepbench_path,machine=\(escape(file.machine.machineID)),path=\(escape(m.scenario)),design=\(escape(m.design))"
                : "stepbench,machine=\(escape(file.machine.machineID)),scenario=\(escape(m.scenario)),design=\(escape(m.design)),threads=\(m.threads)"
            if grouped.last?.key == key {
                grouped[grouped.count - 1].fields.append("\(m.name)=\(number(m.median))")
            } else {
                grouped.append((key, ["\(m.name)=\(number(m.median))"]))
            }
        }
        for g in grouped { points.append("\(g.key) \(g.fields.joined(separator: ",")) \(timestamp)") }
        return points.joined(separator: "\n") + "\n"
    }

    /// Tag values: commas, spaces and equals signs are escaped with a backslash.
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            if c == "," || c == " " || c == "=" { out.append("\\") }
            out.append(c)
        }
        return out
    }
}
