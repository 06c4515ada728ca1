/// The figures StepBench reports, by the names results, comparisons, noise profiles and exports
/// use for them (their raw values, which files and scripts read).
public enum Metric: String, Codable, CaseIterable, Sendable {
    case nsPerElement = "ns_per_element"
    case elementsPerSecond = "elements_per_second"
    case allocationsPerElement = "allocations_per_element"
    case cpuNsPerElement = "cpu_ns_per_element"
    case latencyP50 = "latency_p50"
    case latencyP90 = "latency_p90"
    case latencyP99 = "latency_p99"
    case latencyP999 = "latency_p999"
    case latencyMax = "latency_max"
    /// Each repetition's ns/element over its floor's in the same round (`compare`).
    case nsPerElementVsFloor = "ns_per_element_vs_floor"
    /// Callgrind's exact count (`stepbench profile`).
    case instructionsPerElement = "instructions_per_element"
    /// A path's exact counts per event (`stepbench profile`): callgrind's instructions, the
    /// synchronising ones among them, jemalloc's allocations.
    case instructionsPerEvent = "instructions_per_event"
    case synchronisingPerEvent = "synchronising_instructions_per_event"
    case allocationsPerEvent = "allocations_per_event"
    /// A comparison row about a whole row: measured on one side only.
    case all
    /// A comparison row about a whole row: it failed its verification.
    case verification

    /// The unit exports give it.
    public var unit: String {
        switch self {
        case .elementsPerSecond: "1/s"
        case .allocationsPerElement, .allocationsPerEvent: "allocations"
        case .instructionsPerElement, .instructionsPerEvent, .synchronisingPerEvent: "instructions"
        case .nsPerElementVsFloor: "ratio"
        case .all, .verification: ""
        case .nsPerElement, .cpuNsPerElement, .latencyP50, .latencyP90, .latencyP99, .latencyP999, .latencyMax: "ns"
        }
    }

    /// Whether a smaller value is better.
    public var smallerIsBetter: Bool { self != .elementsPerSecond }
}
