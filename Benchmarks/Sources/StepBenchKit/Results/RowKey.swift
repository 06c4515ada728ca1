import StepBenchScenarios

/// What identifies a row of a results file, and so what rows are matched by across files
/// (`compare`, `merge`, the noise profile, the two passes of a run): scenario, design, threads.
public struct RowKey: Hashable, Sendable, CustomStringConvertible {
    public var scenario: ScenarioKind
    /// The design, or the floor for floor rows.
    public var design: Subject
    public var threads: Int

    public init(scenario: ScenarioKind, design: Subject, threads: Int) {
        self.scenario = scenario
        self.design = design
        self.threads = threads
    }

    /// "sync-step atomic ×1".
    public var description: String { "\(scenario.rawValue) \(design) ×\(threads)" }
}

extension ResultsFile.Row {
    public var key: RowKey { RowKey(scenario: scenario, design: design, threads: threads) }
}

extension ResultsFile.ProfileRow {
    /// Profiles are of one thread.
    public var key: RowKey { RowKey(scenario: scenario, design: design, threads: 1) }
}

extension ResultsFile.PathRow {
    /// What identifies a path row across files: the path and what drove it.
    public struct Key: Hashable, Sendable {
        public var path: StepPath
        public var subject: Subject
    }

    public var key: Key { Key(path: path, subject: design) }

    /// The three counts per event, each with its metric, in the order tables show them.
    public var counts: [(metric: Metric, value: Double)] {
        [
            (.instructionsPerEvent, instructionsPerEvent), (.synchronisingPerEvent, synchronisingPerEvent),
            (.allocationsPerEvent, allocationsPerEvent),
        ]
    }
}

extension ResultsFile {
    /// The row of `key`, if the file has it.
    public func row(_ key: RowKey) -> Row? { rows.first { $0.key == key } }
}
