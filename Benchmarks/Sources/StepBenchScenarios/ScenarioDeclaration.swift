@_spi(Measurement) import Stepping

/// Everything the suite asks of one scenario, declared once, beside the scenario's code (each
/// scenario's file declares it and its floor): what it is, its floor, its threads and element
/// counts, what its rows record and are decided on, the rules it races, its roles in the gate,
/// the A/B and the report, and how one repetition runs. ``ScenarioKind`` names the scenarios and
/// reads every fact from here; the catalog (`stepbench list`), the protocols and the report's
/// questions are derived from these values.
public struct ScenarioDeclaration: Sendable {
    /// The thread counts a scenario runs at.
    public enum Threads: Sendable {
        /// One thread, whatever is asked.
        case one
        /// Two: a driver and a fulfiller (the hand-off scenarios).
        case two
        /// The thread counts asked for.
        case requested
        /// Those asked for from 2 up (one thread cannot race), or 2 when none is.
        case racing
    }

    /// The metric a timing comparison decides the scenario on (``ScenarioKind/primaryMetric``).
    public enum Primary: Sendable {
        /// Each repetition over its floor's in the same round: machine drift cancels.
        case ratioToFloor
        /// p50 latency: the elapsed time is mostly the harness's or a timer's.
        case latencyP50
        /// ns/element: a floor, or a row with no floor.
        case nsPerElement
    }

    /// The scenario's own count of the work around its elements, per element.
    public enum Side: Sendable {
        case staleCalls, inputsPerRound
    }

    /// The questions and protocols a scenario answers, each named once (the catalog's roles).
    public enum Role: Sendable, Equatable {
        /// The pure cost per element (one thread; its profile is the instruction counts').
        case perElement
        /// A promise fulfilled on another thread.
        case crossThread
        /// The asynchronous designs' verdict for a promise fulfilled on another thread.
        case asynchronousVerdict
        /// Contention, at the most threads measured.
        case contended
        /// `cancel()` racing the inputs: its p50 is `cancel()` → upstream cancelled.
        case cancel
        /// The stepping API with no synchronisation (a design over it is its synchronisation).
        case apiFloor
        /// The peers' direct rows (their library with no stepper contract).
        case direct
        /// The peers' plain programs on `(0..<n).publisher`, beside their direct rows.
        case plain
        /// The same plain programs on sync-step's upstream: what the upstream accounts for.
        case plainUpstream
        /// In the contended protocol of an interleaved A/B (with its floor).
        case abtest
        /// Counted under callgrind by `stepbench profile`.
        case profiled
    }

    public var summary: String
    public var isFloor: Bool
    /// The floor it is compared to (nil: a floor, or a row compared to another row).
    public var floor: ScenarioKind?
    public var threads: Threads
    /// Whether per-event latency is recorded.
    public var hasLatency: Bool
    /// Elements per repetition of the quick and full presets and of the package-benchmark suite
    /// (nil for a floor: it does the work of the scenario it stands for).
    public var elements: (quick: Int, full: Int, suite: Int)?
    /// What one unit of its work is: an element, or a round.
    public var unit: String = "element"
    /// Whether each thread adds work of its own, so that throughput grows with the threads.
    public var throughputScalesWithThreads = false
    /// Whether timers set the pace: its repetitions last as long as their timers whatever the
    /// design costs (never sized to a budget), and its allocations are Dispatch's (never exact).
    public var timersSetThePace = false
    /// Whether two threads race transitions of the subscriber, so that the schedule decides
    /// which ones run.
    public var racesTransitions = false
    /// Whether a run at one thread touches the subscriber from that thread only (no hammer,
    /// canceller, fulfiller or timer thread), so that nothing can contend; false where another
    /// thread is always there.
    public var aloneAtOneThread = false
    /// How far two exact counts of allocations per unit of work may lie apart.
    public var allocationTolerance = 0.01
    public var primary: Primary
    public var side: Side? = nil
    /// The rules it races on several threads.
    public var racedRules: [SteppingRule] = []
    public var roles: [Role] = []
    /// Runs one repetition of `subject` at `threads` over `elements`.
    public var run: @Sendable (_ subject: Subject, _ threads: Int, _ elements: Int) throws -> RepetitionResult

    /// The design a scenario that measures designs was given (a floor is given none).
    static func stepping(_ subject: Subject, _ scenario: String) throws -> SteppingDesign {
        guard let design = subject.design else { throw ScenarioFailure("\(scenario) needs a design, not \(subject)") }
        return design
    }
}
