import Foundation
import StepBenchChangePoints
import StepBenchScenarios

/// One (scenario, design, threads, metric) over the runs of a results folder, in history order:
/// what scripts/history looks for change points in. The tool decides what each point is; the
/// script only detects and draws.
///
/// Metrics: `ns_per_element_vs_floor` (each repetition over its floor's repetition of the same
/// round, as `compare` pairs them, ``Comparison/timingSamples(_:in:)``), `latency_p50`,
/// `allocations_per_element` (exact where the newest file that flags the row calls it exact,
/// else like a timing over the repetitions that carry their own count) and, from profiles,
/// `instructions_per_element` (exact). A timing point's value is the lower median of its
/// repetitions (in log space), its `logs` their natural logs.
public struct HistorySeries: Codable, Equatable, Sendable {
    // The row's key, field by field: the file keeps the names results files use.
    public var scenario: ScenarioKind
    public var design: Subject
    public var threads: Int
    public var metric: Metric
    /// Fixed by the code: any step beyond `tolerance` is a change (no test needed).
    public var exact: Bool
    /// Exact series: the gate's tolerance for this count.
    public var tolerance: Tolerance?
    /// Timing series: the between-run drift σ of the folder's noise profile (nil: none measured).
    public var driftSD: Double?
    public var points: [Point]
    /// What the change-point search found (``ChangePoints``): filled in by `stepbench series`.
    public var detection: ChangePoints.Outcome? = nil

    public struct Point: Codable, Equatable, Sendable {
        /// Index into the folder's runs (history order).
        public var run: Int
        public var value: Double
        /// Timing points: the natural logs of the per-repetition values.
        public var logs: [Double]?
        /// What the value depends on besides the code, in order: a change point across a change
        /// of these is flagged (the measurement changed, not necessarily the code).
        public var measurement: [Setting]
    }

    public struct Setting: Codable, Equatable, Sendable {
        public var name: String
        public var value: SettingValue
    }

    /// A setting's value: text, a whole number, or absent (JSON null).
    public enum SettingValue: Codable, Equatable, Sendable {
        case text(String), number(Int), absent

        public init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .absent
            } else if let n = try? c.decode(Int.self) {
                self = .number(n)
            } else {
                self = .text(try c.decode(String.self))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .text(let s): try c.encode(s)
            case .number(let n): try c.encode(n)
            case .absent: try c.encodeNil()
            }
        }
    }

    /// How far an exact count may move before it is a change: relative (instructions) or
    /// absolute per element (allocations).
    public struct Tolerance: Codable, Equatable, Sendable {
        public var relative: Double?
        public var absolute: Double?

        public init(relative: Double?, absolute: Double?) {
            self.relative = relative
            self.absolute = absolute
        }
    }

    /// The row this series follows.
    public var row: RowKey { RowKey(scenario: scenario, design: design, threads: threads) }
}

extension HistorySeries {
    /// The order series are listed in: by metric, then scenario and design in the tool's order.
    static let metricOrder: [Metric] = [
        .nsPerElementVsFloor, .latencyP50, .allocationsPerElement, .instructionsPerElement,
    ]

    /// Every series of `folder`'s runs, in the tool's order. `noise`: the drift allowances (nil:
    /// none, so no timing change can be called).
    public static func build(_ folder: RunFolder, noise: NoiseProfile?) -> [HistorySeries] {
        // Whether a row's allocation count is exact: what its newest file that says so says.
        var exactAllocations: [RowKey: Bool] = [:]
        for run in folder.runs {
            for row in run.file.rows {
                if let exact = row.allocationsExact { exactAllocations[row.key] = exact }
            }
        }
        var series: [HistorySeries] = []
        struct SeriesKey: Hashable {
            var row: RowKey
            var metric: Metric
        }
        var index: [SeriesKey: Int] = [:]
        func add(_ row: RowKey, _ metric: Metric, exact: Bool, run: Int, value: Double, logs: [Double]?, _ m: [Setting])
        {
            let new = HistorySeries(
                scenario: row.scenario, design: row.design, threads: row.threads, metric: metric,
                exact: exact, tolerance: exact ? tolerance(metric, of: row) : nil,
                driftSD: exact ? nil : noise?.driftSD(row, metric), points: [])
            let key = SeriesKey(row: row, metric: metric)
            if index[key] == nil {
                index[key] = series.count
                series.append(new)
            }
            series[index[key]!].points.append(Point(run: run, value: value, logs: logs, measurement: m))
        }
        for (i, run) in folder.runs.enumerated() {
            for row in run.file.rows where row.status == .ok && !row.repetitions.isEmpty {
                let m = measurement(run.file, row: row)
                for (metric, samples) in Comparison.timingSamples(row, in: run.file)
                where metric == .nsPerElementVsFloor || metric == .latencyP50 {
                    let logs = samples.map { log($0) }
                    add(row.key, metric, exact: false, run: i, value: exp(Statistics.median(logs)), logs: logs, m)
                }
                if exactAllocations[row.key] ?? false {
                    let value = Statistics.median(row.repetitions.map(\.allocationsPerElement))
                    add(row.key, .allocationsPerElement, exact: true, run: i, value: value, logs: nil, m)
                } else if let own = Comparison.allocationSamples(row) {
                    let logs = own.map { log($0) }
                    let value = exp(Statistics.median(logs))
                    add(row.key, .allocationsPerElement, exact: false, run: i, value: value, logs: logs, m)
                }
            }
            for p in run.file.profiles ?? [] where p.instructionsPerElement != 0 {
                let m = measurement(run.file, row: nil)
                add(p.key, .instructionsPerElement, exact: true, run: i, value: p.instructionsPerElement, logs: nil, m)
            }
        }
        return order(series, folder)
    }

    /// The gate's tolerance for an exact count of `row` (`compare`'s: by design for instructions,
    /// by scenario and design for allocations).
    static func tolerance(_ metric: Metric, of row: RowKey) -> Tolerance {
        metric == .instructionsPerElement
            ? Tolerance(relative: Comparison.instructionTolerance(design: row.design), absolute: nil)
            : Tolerance(relative: nil, absolute: Comparison.allocationTolerance(of: row))
    }

    static func measurement(_ file: ResultsFile, row: ResultsFile.Row?) -> [Setting] {
        let c = file.configuration
        var settings: [Setting] = [
            Setting(name: "schema", value: .text(file.schema)),
            Setting(name: "preset", value: .text(c.preset.rawValue)),
            Setting(name: "handoff", value: .text(c.handoff)),
            Setting(name: "elementsOverride", value: c.elementsOverride.map { .number($0) } ?? .absent),
            Setting(name: "aggregation", value: file.aggregation.map { .text($0) } ?? .absent),
        ]
        if let row { settings.append(Setting(name: "elements", value: .number(row.elements))) }
        return settings
    }

    /// Metric, then scenario and design as the newest catalog lists them (then in the order the
    /// newest files wrote their rows), floors last, then threads; first seen first among equals.
    static func order(_ series: [HistorySeries], _ folder: RunFolder) -> [HistorySeries] {
        let newestFirst = folder.runs.reversed()
        let catalog = newestFirst.lazy.compactMap(\.file.catalog).first
        let rows = newestFirst.flatMap(\.file.rows)
        let scenarios = inOrder(rows.map(\.scenario.rawValue), listed: catalog?.scenarios.map(\.name) ?? [])
        let floor = Subject.floor.name
        let designs = inOrder(rows.map(\.design.name), listed: catalog?.designs ?? []).filter { $0 != floor } + [floor]
        func rank(_ list: [String], _ name: String) -> Int { list.firstIndex(of: name) ?? list.count }
        return series.enumerated().sorted { a, b in
            let (x, y) = (a.element, b.element)
            let kx = (metricOrder.firstIndex(of: x.metric) ?? metricOrder.count, rank(scenarios, x.scenario.rawValue))
            let ky = (metricOrder.firstIndex(of: y.metric) ?? metricOrder.count, rank(scenarios, y.scenario.rawValue))
            if kx != ky { return kx < ky }
            if x.scenario != y.scenario { return x.scenario.rawValue < y.scenario.rawValue }
            let dx = (rank(designs, x.design.name), x.threads, a.offset)
            let dy = (rank(designs, y.design.name), y.threads, b.offset)
            return dx < dy
        }.map(\.element)
    }

    /// `names` in first-seen order, those `listed` first in the list's order.
    static func inOrder(_ names: [String], listed: [String]) -> [String] {
        var seen: [String] = []
        for name in names where !seen.contains(name) { seen.append(name) }
        let first = listed.filter { seen.contains($0) }
        return first + seen.filter { !first.contains($0) }
    }
}
