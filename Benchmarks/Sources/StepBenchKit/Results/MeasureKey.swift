import StepBenchScenarios

/// What one number measures: the one identity of a measurement in every file, comparison, noise
/// profile, ranking, history series and export that carries it — a scenario's row or a path
/// driver's exact count (``Target``), the subject measured (a design, a peer, or a floor: a
/// floor is the subject of its floor scenario's row, as it is of a path), its threads (a path
/// runs on one) and its metric. Files write it field by field, under the names results files
/// have always used (``encodeFields(to:)``): `scenario` (a path's name for a path's count),
/// `design`, `threads`, `metric`.
public struct MeasureKey: Hashable, Sendable, CustomStringConvertible {
    /// What was driven: a scenario, or a path driver (``StepPath``).
    public enum Target: Hashable, Sendable {
        case scenario(ScenarioKind)
        case path(StepPath)

        /// The scenario's or path's name, as files and tables write it.
        public var name: String {
            switch self {
            case .scenario(let s): s.rawValue
            case .path(let p): p.rawValue
            }
        }

        /// The target files name `name`: a scenario's, else a path's (no name is both).
        public init?(name: String) {
            if let s = ScenarioKind(rawValue: name) {
                self = .scenario(s)
            } else if let p = StepPath(rawValue: name) {
                self = .path(p)
            } else {
                return nil
            }
        }

        public var scenario: ScenarioKind? { if case .scenario(let s) = self { s } else { nil } }
        public var path: StepPath? { if case .path(let p) = self { p } else { nil } }
    }

    public var target: Target
    public var subject: Subject
    public var threads: Int
    public var metric: Metric

    public init(target: Target, subject: Subject, threads: Int, metric: Metric) {
        self.target = target
        self.subject = subject
        self.threads = threads
        self.metric = metric
    }

    /// `metric` of a scenario's row.
    public init(_ row: RowKey, _ metric: Metric) {
        self.init(target: .scenario(row.scenario), subject: row.design, threads: row.threads, metric: metric)
    }

    /// `metric` of a path driven for `subject` (on one thread).
    public init(path: StepPath, _ subject: Subject, _ metric: Metric) {
        self.init(target: .path(path), subject: subject, threads: 1, metric: metric)
    }

    /// The scenario's row this key measures (nil for a path's count).
    public var row: RowKey? {
        target.scenario.map { RowKey(scenario: $0, design: subject, threads: threads) }
    }

    /// "sync-step atomic ×1 ns_per_element", "sync-more atomic instructions_per_event".
    public var description: String {
        switch target {
        case .scenario: "\(target.name) \(subject) ×\(threads) \(metric.rawValue)"
        case .path: "\(target.name) \(subject) \(metric.rawValue)"
        }
    }

    /// The key as one label, "scenario|design|threads|metric": what noise profiles and
    /// calibrations name an entry by in their files (never what anything is matched by).
    public var label: String { "\(target.name)|\(subject.name)|\(threads)|\(metric.rawValue)" }

    private enum FieldKeys: String, CodingKey { case scenario, design, threads, metric }

    /// Writes the key's four fields into the value being encoded (a row, an entry, a series).
    public func encodeFields(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FieldKeys.self)
        try c.encode(target.name, forKey: .scenario)
        try c.encode(subject, forKey: .design)
        try c.encode(threads, forKey: .threads)
        try c.encode(metric, forKey: .metric)
    }

    /// Reads the four fields of the value being decoded; a target no scenario or path is named
    /// is an error naming it.
    public init(fields decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: FieldKeys.self)
        let name = try c.decode(String.self, forKey: .scenario)
        guard let target = Target(name: name) else {
            throw DecodingError.dataCorruptedError(
                forKey: .scenario, in: c, debugDescription: "no scenario or path is named '\(name)'")
        }
        self.init(
            target: target, subject: try c.decode(Subject.self, forKey: .design),
            threads: try c.decode(Int.self, forKey: .threads), metric: try c.decode(Metric.self, forKey: .metric))
    }
}
