@_spi(Measurement) import Stepping

/// Every scenario StepBench measures, by name. Each runs in-process, verifies its own outcome
/// (every element delivered once, in order, completion seen) and throws ``ScenarioFailure`` if
/// not. What the suite asks of a scenario is declared once, beside its code
/// (``ScenarioDeclaration``, ``declaration``): adding a scenario is a case here, its code and
/// its declaration.
public enum ScenarioKind: String, CaseIterable, Sendable, Codable {
    case syncStep = "sync-step"
    case asyncStep = "async-step"
    case asyncPark = "async-park"
    case staleStorm = "stale-storm"
    case cancelRace = "cancel-race"
    case fanOut = "fan-out"
    case paceJitter = "pace-jitter"
    case directSync = "direct-sync"
    case plainSync = "plain-sync"
    case plainUpstream = "plain-upstream"
    case floorSync = "floor-sync"
    case floorStep = "floor-step"
    case floorPingPong = "floor-pingpong"
    case floorAsync = "floor-async"
    case floorAsyncPark = "floor-async-park"
    case floorStaleStorm = "floor-stale-storm"
    case floorCancelRace = "floor-cancel-race"
    case floorFanOut = "floor-fan-out"
    case floorPace = "floor-pace"

    /// Everything the suite asks of this scenario, declared beside its code: the one switch
    /// from a scenario's name to its declaration.
    public var declaration: ScenarioDeclaration {
        switch self {
        case .syncStep: .syncStep
        case .asyncStep: .asyncStep
        case .asyncPark: .asyncPark
        case .staleStorm: .staleStorm
        case .cancelRace: .cancelRace
        case .fanOut: .fanOut
        case .paceJitter: .paceJitter
        case .directSync: .directSync
        case .plainSync: .plainSync
        case .plainUpstream: .plainUpstream
        case .floorSync: .floorSync
        case .floorStep: .floorStep
        case .floorPingPong: .floorPingPong
        case .floorAsync: .floorAsync
        case .floorAsyncPark: .floorAsyncPark
        case .floorStaleStorm: .floorStaleStorm
        case .floorCancelRace: .floorCancelRace
        case .floorFanOut: .floorFanOut
        case .floorPace: .floorPace
        }
    }

    /// The scenarios that play `role`, in the order of ``allCases``.
    public static func with(_ role: ScenarioDeclaration.Role) -> [ScenarioKind] {
        allCases.filter { $0.declaration.roles.contains(role) }
    }

    /// The scenario that answers `role`, a question one scenario answers (perElement,
    /// crossThread, asynchronousVerdict, cancel, apiFloor, direct: the declarations' test holds
    /// each to one).
    public static func answering(_ role: ScenarioDeclaration.Role) -> ScenarioKind { with(role)[0] }

    /// One line for `stepbench list`.
    public var summary: String { declaration.summary }

    /// Floor rows have no design: each is its scenario's work, threads, hand-offs and waiter
    /// minus the stepping subscriber, so that design × floor is the design's own cost.
    public var isFloor: Bool { declaration.isFloor }

    /// The floor each scenario is compared to: one of its own shape.
    public var floor: ScenarioKind? { declaration.floor }

    /// The scenario a floor stands for (nil for floor-pingpong and non-floors).
    public var floorOf: ScenarioKind? { Self.allCases.first { $0.floor == self } }

    /// Whether a slow design's repetitions may run fewer elements (``Preset/repetitionBudget``):
    /// not where timers set the pace (pace-jitter and its floor last as long as their timers,
    /// whatever the design costs).
    public var sizesToBudget: Bool { !declaration.timersSetThePace }

    /// Whether per-event latency is recorded.
    public var hasLatency: Bool { declaration.hasLatency }

    /// Whether a run at `threads` touches the subscriber from one thread only (no hammer,
    /// canceller, fulfiller or timer thread), so that nothing can contend.
    public func isSingleThreaded(threads: Int) -> Bool { declaration.aloneAtOneThread && threads == 1 }

    /// The thread counts this scenario runs at, given the requested ones.
    public func threadCounts(requested: [Int]) -> [Int] {
        switch declaration.threads {
        case .one: [1]
        case .two: [2]
        case .requested: requested
        case .racing: requested.filter { $0 >= 2 }.isEmpty ? [2] : requested.filter { $0 >= 2 }
        }
    }

    /// Elements per repetition in a preset (rounds for cancel-race, per pipeline for fan-out).
    public func elements(_ preset: Preset) -> Int {
        if let shape = floorOf { return shape.elements(preset) }  // a floor does its scenario's work
        if preset == .brief { return suiteElements }
        guard let elements = declaration.elements else { preconditionFailure("\(rawValue) declares no elements") }
        return preset == .full ? elements.full : elements.quick
    }

    /// How far apart two counts of allocations per element may lie and still be the same count
    /// (the CI gate, package-benchmark's thresholds and the malloc agreement all read it), or
    /// nil when thread timing decides the count, which is then compared like a timing: a design
    /// whose counts follow the schedule (`actor-stream`) allocates with what its mailbox holds
    /// and when its task parks, and pace's timers are Dispatch's. Otherwise the code fixes the count: to the
    /// allocation in a single-thread scenario (0.01 per element: the runtime's own background
    /// threads), and to the allocation per round in cancel-race, whose racing threads add a few
    /// allocations per run (Dispatch's own, never one per round): 0.5 per round lets those
    /// through and catches one allocation more per subscription, except for a design that
    /// allocates per transition (`seed`'s action closures), where the race decides which
    /// transitions run. That design's count is not fixed in async-park either: the woken
    /// fulfiller's promise lands before or after the stepper has returned, as the wake-up
    /// falls, and each order allocates its own closures. The one declaration.
    public func allocationTolerance(for subject: Subject) -> Double? {
        guard subject.design?.traits.countsFollowTheSchedule != true else { return nil }
        if subject.design?.traits.allocatesPerTransition == true && racesTransitions { return nil }
        return declaration.timersSetThePace ? nil : declaration.allocationTolerance
    }

    /// Whether two threads race transitions of the subscriber, so that the schedule decides
    /// which ones run (cancel-race's cancels and inputs; async-step's and async-park's promise,
    /// fulfilled on another thread before or after the stepper returns).
    var racesTransitions: Bool { declaration.racesTransitions }

    /// Whether the count of allocations is fixed by the code (``allocationTolerance(for:)``).
    public func allocationsAreExact(for subject: Subject) -> Bool { allocationTolerance(for: subject) != nil }

    /// Elements per iteration of the package-benchmark suite (Benchmarks/SteppingBenchmarks): a
    /// few milliseconds each, so one benchmark takes about a second (rounds for cancel-race, per
    /// pipeline for fan-out). The CI gate runs stepbench with the same counts so that the two
    /// tools' allocation counts can be compared for the same work.
    public var suiteElements: Int {
        if let shape = floorOf { return shape.suiteElements }
        guard let elements = declaration.elements else { preconditionFailure("\(rawValue) declares no elements") }
        return elements.suite
    }

    /// The elements of a pass that only counts (allocations, contention) where its timing pass
    /// runs `elements`: a quarter, as long as that is no fewer than the suite's
    /// (``suiteElements``, where the counts are known to be exact within their tolerance per
    /// element); `elements` otherwise. Counts per element do not need the timing's length.
    public func countingElements(_ elements: Int) -> Int {
        elements / 4 >= suiteElements ? elements / 4 : elements
    }

    /// Threads of the package-benchmark suite's run of this scenario (racing scenarios at 2).
    public var suiteThreads: Int { threadCounts(requested: [2]).first ?? 1 }

    /// The package-benchmark name of (this scenario, subject): `<scenario>_<design>`, floors
    /// `<scenario>` (no spaces or `/`: threshold files are named after it).
    public func benchmarkName(for subject: Subject) -> String {
        [rawValue, subject.designName].compactMap { $0 }.joined(separator: "_")
    }

    /// What this scenario measures: a floor measures itself (its rows' subject is `floor`),
    /// direct-sync each peer with a direct row (``DirectRow``), every other scenario a design
    /// (every design this process has described: the built-ins, then any outside design).
    public var subjects: [Subject] { subjects(among: SteppingDesign.described) }

    /// What this scenario measures of `designs` (``subjects``): a run's combinations.
    public func subjects(among designs: [SteppingDesign]) -> [Subject] {
        if isFloor { return [.floor] }
        if self == .directSync { return designs.filter { DirectRow.of($0) != nil }.map(Subject.design) }
        if self == .plainSync || self == .plainUpstream {
            return designs.filter { PlainRow.of($0) != nil }.map(Subject.design)
        }
        return designs.map(Subject.design)
    }

    /// The rules this scenario races on several threads: stale-storm's other threads fulfil
    /// duplicate and stale promises while the stepper runs (S2, S3); cancel-race's cancel while
    /// inputs flow (C4).
    public var racedRules: [SteppingRule] { declaration.racedRules }

    /// The known issue that keeps `design` out of this scenario, if any: a raced rule the design
    /// declares broken fatally (``SteppingDesign/Traits/KnownIssue/isFatal``: a crash or a stall
    /// measures nothing). A design that breaks a raced rule harmlessly is measured (cancel-race
    /// then does not hold it to C4's one late call).
    public func exclusion(of design: SteppingDesign) -> SteppingDesign.Traits.KnownIssue? {
        racedRules.lazy.compactMap { design.traits.knownIssue($0) }.first { $0.isFatal }
    }

    /// Runs one repetition of `subject`: `.floor` for a floor scenario, a design for any other.
    public func run(_ subject: Subject, threads: Int, elements: Int) throws -> RepetitionResult {
        if isFloor && subject != .floor {
            throw ScenarioFailure("\(rawValue) is a floor: it measures no design (\(subject))")
        }
        return try declaration.run(subject, threads, elements)
    }
}
