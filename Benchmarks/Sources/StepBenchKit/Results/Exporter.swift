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
        public var key: MeasureKey
        /// An exact count (`stepbench profile`): one value, no interval.
        public var exact = false
        public var median: Double
        public var ciLow: Double
        public var ciHigh: Double

        public var kind: Kind { key.target.path == nil ? .scenario : .path }
        /// The scenario's name, or the path's.
        public var scenario: String { key.target.name }
        public var design: String { key.subject.name }
        public var threads: Int { key.threads }
        public var metric: Metric { key.metric }

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
                    Figure(key: MeasureKey(row.key, metric), median: e.median, ciLow: e.ciLow, ciHigh: e.ciHigh))
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
                    key: MeasureKey(p.key, .instructionsPerElement), exact: true, median: p.instructionsPerElement,
                    ciLow: p.instructionsPerElement, ciHigh: p.instructionsPerElement)
            )
        }
        for p in file.paths ?? [] {
            for (metric, value) in p.counts {
                out.append(
                    Figure(
                        key: MeasureKey(path: p.path, p.design, metric), exact: true, median: value, ciLow: value,
                        ciHigh: value))
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
                .malformed,
                "createdAt '\(file.createdAt)' is not an ISO 8601 time such as 2026-11-22T20:21:16Z; InfluxDB points are stamped with the run's start"
            )
        }
        let timestamp = Int64(start.timeIntervalSince1970.rounded(.down)) * 1_000_000_000
        var points: [String] = []
        // One point per measured row: the figures of one target, subject and threads, in order.
        var grouped: [(first: MeasureKey, fields: [String])] = []
        for m in figures(file) {
            let field = "\(m.name)=\(number(m.median))"
            if let last = grouped.last?.first, last.target == m.key.target, last.subject == m.key.subject,
                last.threads == m.key.threads
            {
                grouped[grouped.count - 1].fields.append(field)
            } else {
                grouped.append((m.key, [field]))
            }
        }
        for g in grouped {
            // a path's counts: their own measurement, tagged by path
            let machine = escape(file.machine.machineID), design = escape(g.first.subject.name)
            let series =
                switch g.first.target {
                case .path(let path): "stepbench_path,machine=\(machine),path=\(escape(path.rawValue)),design=\(design)"
                case .scenario(let s):
                    "stepbench,machine=\(machine),scenario=\(escape(s.rawValue)),design=\(design),threads=\(g.first.threads)"
                }
            points.append("\(series) \(g.fields.joined(separator: ",")) \(timestamp)")
        }
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
