@_spi(Measurement) import Stepping

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
    /// stale-storm: the hammers' stale and duplicate promise calls per element
    /// (``RepetitionResult/sideEvents``).
    case staleCallsPerElement = "stale_calls_per_element"
    /// cancel-race: inputs delivered per round before the cancel won.
    case inputsPerRound = "inputs_per_round"
    /// Context switches of the whole process per element (getrusage): voluntary (a thread
    /// parked) and involuntary (a thread was preempted).
    case voluntarySwitchesPerElement = "voluntary_switches_per_element"
    case involuntarySwitchesPerElement = "involuntary_switches_per_element"
    /// What contention made the design do per element (a counting build's pass,
    /// `ContentionCounts`).
    case exchangeFailuresPerElement = "exchange_failures_per_element"
    case borrowYieldsPerElement = "borrow_yields_per_element"
    case completingYieldsPerElement = "completing_yields_per_element"
    case lockSlowPathsPerElement = "lock_slow_paths_per_element"
    case drainWakeupsPerElement = "drain_wakeups_per_element"
    case executorJobsPerElement = "executor_jobs_per_element"
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
        case .staleCallsPerElement, .inputsPerRound, .voluntarySwitchesPerElement, .involuntarySwitchesPerElement,
            .exchangeFailuresPerElement, .borrowYieldsPerElement, .completingYieldsPerElement,
            .lockSlowPathsPerElement, .drainWakeupsPerElement, .executorJobsPerElement:
            "events"
        case .all, .verification: ""
        case .nsPerElement, .cpuNsPerElement, .latencyP50, .latencyP90, .latencyP99, .latencyP999, .latencyMax: "ns"
        }
    }

    /// Whether a smaller value is better (for the side counts: neither is; they explain).
    public var smallerIsBetter: Bool { self != .elementsPerSecond }

    /// The contention counters, in the order tables show them, with how to read each from a
    /// repetition's counts.
    public static let contention: [(metric: Metric, count: @Sendable (ContentionCounts) -> UInt64)] = [
        (.exchangeFailuresPerElement, { $0.exchangeFailures }),
        (.borrowYieldsPerElement, { $0.borrowYields }),
        (.completingYieldsPerElement, { $0.completingYields }),
        (.lockSlowPathsPerElement, { $0.lockSlowPaths }),
        (.drainWakeupsPerElement, { $0.drainWakeups }),
        (.executorJobsPerElement, { $0.executorJobs }),
    ]
}
