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
}
