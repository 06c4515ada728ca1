import Foundation
import StepBenchChangePoints
import StepBenchScenarios

/// One measurement (``MeasureKey``) over the runs of a results folder, in history order: what
/// scripts/history looks for change points in. The tool decides what each point is and where it
/// changed; the script only draws.
///
/// Metrics: `ns_per_element_vs_floor` (each repetition over its floor's repetition of the same
/// round, as `compare` pairs them, ``Comparison/timingSamples(_:in:)``), `latency_p50`,
/// `allocations_per_element` (exact where the newest file that flags the row calls it exact,
/// else like a timing over the repetitions that carry their own count); from profiles,
/// `instructions_per_element` (exact) and every path's exact counts per event (instructions,
/// synchronising instructions, allocations: the gate's). A timing point's value is the lower
/// median of its repetitions (in log space), its `logs` their natural logs. The file writes the
/// key field by field, as results files do (a path's name in the `scenario` field).
public struct HistorySeries: Codable, Equatable, Sendable {
    public var key: MeasureKey
    /// Fixed by the code: any step beyond `tolerance` is a change (no test needed).
    public var exact: Bool
    /// Exact series: the gate's tolerance for this count.
    public var tolerance: Tolerance?
    /// Timing series: the between-run drift σ of the folder's noise profile (nil: none measured).
    public var driftSD: Double?
    public var points: [Point]
    /// What the change-point search found (``ChangePoints``): filled in by `stepbench history series`.
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

    public var metric: Metric { key.metric }
    public var design: Subject { key.subject }
    public var threads: Int { key.threads }

    public init(
        key: MeasureKey, exact: Bool, tolerance: Tolerance?, driftSD: Double?, points: [Point],
        detection: ChangePoints.Outcome? = nil
    ) {
        self.key = key
        self.exact = exact
        self.tolerance = tolerance
        self.driftSD = driftSD
        self.points = points
        self.detection = detection
    }

    private enum CodingKeys: String, CodingKey { case exact, tolerance, driftSD, points, detection }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            key: try MeasureKey(fields: decoder), exact: try c.decode(Bool.self, forKey: .exact),
            tolerance: try c.decodeIfPresent(Tolerance.self, forKey: .tolerance),
            driftSD: try c.decodeIfPresent(Double.self, forKey: .driftSD),
            points: try c.decode([Point].self, forKey: .points),
            detection: try c.decodeIfPresent(ChangePoints.Outcome.self, forKey: .detection))
    }

    public func encode(to encoder: any Encoder) throws {
        try key.encodeFields(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(exact, forKey: .exact)
        try c.encodeIfPresent(tolerance, forKey: .tolerance)
        try c.encodeIfPresent(driftSD, forKey: .driftSD)
        try c.encode(points, forKey: .points)
        try c.encodeIfPresent(detection, forKey: .detection)
    }
}

extension HistorySeries {
    /// The order series are listed in: by metric, then scenario and design in the tool's order.
    static let metricOrder: [Metric] = [
        .nsPerElementVsFloor, .latencyP50, .allocationsPerElement, .instructionsPerElement, .instructionsPerEvent,
        .synchronisingPerEvent, .allocationsPerEvent,
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
        var index: [MeasureKey: Int] = [:]
        func add(_ key: MeasureKey, exact: Bool, run: Int, value: Double, logs: [Double]?, _ m: [Setting]) {
            if index[key] == nil {
                index[key] = series.count
                series.append(
                    HistorySeries(
                        key: key, exact: exact, tolerance: exact ? tolerance(of: key) : nil,
                        driftSD: exact ? nil : noise?.driftSD(key), points: []))
            }
            series[index[key]!].points.append(Point(run: run, value: value, logs: logs, measurement: m))
        }
        for (i, run) in folder.runs.enumerated() {
            for row in run.file.rows where row.status == .ok && !row.repetitions.isEmpty {
                let m = measurement(run.file, row: row)
                for (metric, samples) in Comparison.timingSamples(row, in: run.file)
                where metric == .nsPerElementVsFloor || metric == .latencyP50 {
                    let logs = samples.map { log($0) }
                    add(
                        MeasureKey(row.key, metric), exact: false, run: i, value: exp(Statistics.median(logs)),
                        logs: logs, m)
                }
                if exactAllocations[row.key] ?? false {
                    let value = Statistics.median(row.repetitions.map(\.allocationsPerElement))
                    add(MeasureKey(row.key, .allocationsPerElement), exact: true, run: i, value: value, logs: nil, m)
                } else if let own = Comparison.allocationSamples(row) {
                    let logs = own.map { log($0) }
                    let value = exp(Statistics.median(logs))
                    add(MeasureKey(row.key, .allocationsPerElement), exact: false, run: i, value: value, logs: logs, m)
                }
            }
            for p in run.file.profiles ?? [] where p.instructionsPerElement != 0 {
                let m = measurement(run.file, row: nil)
                add(
                    MeasureKey(p.key, .instructionsPerElement), exact: true, run: i, value: p.instructionsPerElement,
                    logs: nil, m)
            }
            // Every path's exact counts, as the gate compares them (a path whose counts follow the
            // schedule is left out, as the gate leaves it).
            for p in run.file.paths ?? [] where p.exact {
                let m = measurement(run.file, row: nil)
                for (metric, value) in p.counts {
                    add(MeasureKey(path: p.path, p.design, metric), exact: true, run: i, value: value, logs: nil, m)
                }
            }
        }
        return order(series, folder)
    }

    /// The gate's tolerance for the exact count `key` (`compare`'s: by design for instructions,
    /// by scenario and design for allocations, and the paths' absolute tolerance for their
    /// synchronising instructions and allocations per event).
    static func tolerance(of key: MeasureKey) -> Tolerance {
        switch key.metric {
        case .instructionsPerElement, .instructionsPerEvent:
            Tolerance(relative: Comparison.instructionTolerance(design: key.subject), absolute: nil)
        case .synchronisingPerEvent, .allocationsPerEvent:
            Tolerance(relative: nil, absolute: Comparison.countTolerance)
        default:
            Tolerance(relative: nil, absolute: key.row.map(Comparison.allocationTolerance(of:)))
        }
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
        let scenarios = inOrder(
            rows.map(\.scenario.rawValue) + newestFirst.flatMap { ($0.file.paths ?? []).map(\.path.rawValue) },
            listed: (catalog?.scenarios.map(\.name) ?? []) + (catalog?.paths.map(\.name) ?? []))
        let floor = Subject.floor.name
        let designs = inOrder(rows.map(\.design.name), listed: catalog?.designs ?? []).filter { $0 != floor } + [floor]
        func rank(_ list: [String], _ name: String) -> Int { list.firstIndex(of: name) ?? list.count }
        return series.enumerated().sorted { a, b in
            let (x, y) = (a.element, b.element)
            let (tx, ty) = (x.key.target.name, y.key.target.name)
            let kx = (metricOrder.firstIndex(of: x.metric) ?? metricOrder.count, rank(scenarios, tx))
            let ky = (metricOrder.firstIndex(of: y.metric) ?? metricOrder.count, rank(scenarios, ty))
            if kx != ky { return kx < ky }
            if tx != ty { return tx < ty }
            let dx = (rank(designs, x.key.subject.name), x.key.threads, a.offset)
            let dy = (rank(designs, y.key.subject.name), y.key.threads, b.offset)
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
