/// How much to measure (`stepbench run --preset`): `quick` (the default comparison, a few
/// minutes), `full`, or `brief`: the package-benchmark suite's element counts (a few
/// milliseconds per repetition, ``ScenarioKind/suiteElements``), for the many short processes of
/// an interleaved A/B (`scripts/abtest`).
public enum Preset: String, CaseIterable, Sendable, Codable {
    case quick, full, brief
    public var repetitions: Int {
        switch self {
        case .quick: 5
        case .full, .brief: 11
        }
    }

    /// Seconds one timed repetition of a combination may take (nil: no limit). A design slow
    /// enough to exceed it at the scenario's elements runs a power-of-two fraction of them,
    /// sized at its warm-up (``ScenarioKind/elements(_:)`` stays the count of the others): the
    /// peers cost 20–60 times what the designs do per element, and at the designs' counts their
    /// rows were most of the quick comparison's time. `brief` (the package-benchmark suite's
    /// counts) is never sized.
    public var repetitionBudget: Double? {
        switch self {
        case .quick: 0.2
        case .full: 1.0
        case .brief: nil
        }
    }
}
