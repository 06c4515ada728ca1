extension ScenarioKind {
    /// What one unit of the scenario's work is, as its results count it: an element, or for
    /// cancel-race (and its floor) one round of subscribe, race and cancel.
    public var unit: String { declaration.unit }

    /// Whether each thread adds work of its own (fan-out: one independent pipeline per thread),
    /// so that throughput grows with the threads; elsewhere the threads share one stream.
    public var throughputScalesWithThreads: Bool { declaration.throughputScalesWithThreads }
}
