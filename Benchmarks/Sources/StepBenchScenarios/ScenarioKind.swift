@_spi(Measurement) import Stepping

/// Every scenario StepBench measures. Each runs in-process, verifies its own outcome (every
/// element delivered once, in order, completion seen) and throws ``ScenarioFailure`` if not.
public enum ScenarioKind: String, CaseIterable, Sendable, Codable {
    case syncStep = "sync-step"
    case asyncStep = "async-step"
    case asyncPark = "async-park"
    case staleStorm = "stale-storm"
    case cancelRace = "cancel-race"
    case fanOut = "fan-out"
    case paceJitter = "pace-jitter"
    case directSync = "direct-sync"
    case floorSync = "floor-sync"
    case floorStep = "floor-step"
    case floorPingPong = "floor-pingpong"
    case floorAsync = "floor-async"
    case floorAsyncPark = "floor-async-park"
    case floorStaleStorm = "floor-stale-storm"
    case floorCancelRace = "floor-cancel-race"
    case floorFanOut = "floor-fan-out"
    case floorPace = "floor-pace"

    /// One line for `stepbench list`.
    public var summary: String {
        switch self {
        case .syncStep: "one thread, synchronous upstream, .more inside the stepper: pure per-element cost"
        case .asyncStep:
            "promise fulfilled on a second thread (spin-yield hand-offs, waiter parked); latency .more → next input"
        case .asyncPark:
            "async-step with hand-offs that park (as a pace on a DispatchQueue): the asynchronous designs' verdict"
        case .staleStorm: "sync-step while threads−1 other threads call stale and duplicate promises"
        case .cancelRace:
            "short subscriptions cancelled by threads−1 racing threads; checks C4 every round; elements = rounds"
        case .fanOut:
            "N independent sync-step pipelines on N threads; aggregate and per-thread throughput; elements per pipeline"
        case .paceJitter: "pace at 1 ms on the DispatchQueue scheduler; latency = lateness of each output"
        case .directSync:
            "a peer's library on sync-step's upstream with no stepper contract (its bare loop): the peer's sync-step minus this is its bridge"
        case .floorSync: "floor: the sync-step upstream into a plain .max(1) subscriber (no stepping)"
        case .floorStep:
            "floor: sync-step into floor-step, the stepping API with no synchronisation (one thread only): the API's cost"
        case .floorPingPong:
            "floor: a raw two-thread ping-pong with async-step's spin-yield hand-off (the hand-off alone)"
        case .floorAsync: "floor: async-step's threads, hand-offs and waiter around a plain .max(1) subscriber"
        case .floorAsyncPark:
            "floor: async-park's threads, parking hand-offs and waiter around a plain .max(1) subscriber"
        case .floorStaleStorm: "floor: stale-storm's upstream, hammer threads and token log around a plain subscriber"
        case .floorCancelRace: "floor: cancel-race's rounds and racing cancellers around a plain cancellable subscriber"
        case .floorFanOut: "floor: fan-out's N pipelines of floor-sync (same threads, same waiter)"
        case .floorPace: "floor: the same chain of 1 ms timers on the DispatchQueue scheduler, no stepping"
        }
    }

    /// Floor rows have no design: each is its scenario's work, threads, hand-offs and waiter
    /// minus the stepping subscriber, so that design × floor is the design's own cost.
    public var isFloor: Bool {
        switch self {
        case .syncStep, .asyncStep, .asyncPark, .staleStorm, .cancelRace, .fanOut, .paceJitter, .directSync: false
        case .floorSync, .floorStep, .floorPingPong, .floorAsync, .floorAsyncPark, .floorStaleStorm,
            .floorCancelRace, .floorFanOut, .floorPace:
            true
        }
    }

    /// The floor each scenario is compared to: one of its own shape.
    public var floor: ScenarioKind? {
        switch self {
        case .syncStep: .floorSync
        case .asyncStep: .floorAsync
        case .asyncPark: .floorAsyncPark
        case .staleStorm: .floorStaleStorm
        case .cancelRace: .floorCancelRace
        case .fanOut: .floorFanOut
        case .paceJitter: .floorPace
        // A direct row is a peer's library alone: it is compared to its peer, not to a floor.
        case .directSync: nil
        case .floorSync, .floorStep, .floorPingPong, .floorAsync, .floorAsyncPark, .floorStaleStorm,
            .floorCancelRace, .floorFanOut, .floorPace:
            nil
        }
    }

    /// The scenario a floor stands for (nil for floor-pingpong and non-floors).
    public var floorOf: ScenarioKind? { Self.allCases.first { $0.floor == self } }

    /// Whether a slow design's repetitions may run fewer elements (``Preset/repetitionBudget``):
    /// not where timers set the pace (pace-jitter and its floor last as long as their timers,
    /// whatever the design costs).
    public var sizesToBudget: Bool { self != .paceJitter && self != .floorPace }

    /// Whether per-event latency is recorded.
    public var hasLatency: Bool {
        [
            .asyncStep, .asyncPark, .cancelRace, .paceJitter, .floorPingPong, .floorAsync, .floorAsyncPark,
            .floorCancelRace, .floorPace,
        ].contains(self)
    }

    /// Whether a run at `threads` touches the subscriber from one thread only (no hammer,
    /// canceller, fulfiller or timer thread), so that nothing can contend.
    public func isSingleThreaded(threads: Int) -> Bool {
        switch self {
        case .syncStep, .directSync, .floorSync, .floorStep, .staleStorm, .floorStaleStorm, .fanOut, .floorFanOut:
            threads == 1
        case .asyncStep, .asyncPark, .cancelRace, .paceJitter, .floorPingPong, .floorAsync, .floorAsyncPark,
            .floorCancelRace, .floorPace:
            false
        }
    }

    /// The thread counts this scenario runs at, given the requested ones.
    public func threadCounts(requested: [Int]) -> [Int] {
        switch self {
        case .syncStep, .directSync, .paceJitter, .floorSync, .floorStep, .floorPace: [1]
        case .asyncStep, .asyncPark, .floorPingPong, .floorAsync, .floorAsyncPark: [2]
        case .staleStorm, .fanOut, .floorStaleStorm, .floorFanOut: requested
        case .cancelRace, .floorCancelRace: requested.filter { $0 >= 2 }.isEmpty ? [2] : requested.filter { $0 >= 2 }
        }
    }

    /// Elements per repetition in a preset (rounds for cancel-race, per pipeline for fan-out).
    public func elements(_ preset: Preset) -> Int {
        if let shape = floorOf { return shape.elements(preset) }  // a floor does its scenario's work
        if preset == .brief { return suiteElements }
        let quick: Int =
            switch self {
            case .syncStep, .directSync, .floorSync, .floorStep: 200_000
            case .asyncStep, .floorPingPong: 20_000
            case .asyncPark: 2_000  // every hand-off wakes a thread: tens of µs each
            case .staleStorm: 100_000
            case .cancelRace: 300
            case .fanOut: 100_000
            case .paceJitter: 100  // 1 ms apart: 0.1 s a repetition, whatever the design
            case .floorAsync, .floorAsyncPark, .floorStaleStorm, .floorCancelRace, .floorFanOut, .floorPace:
                preconditionFailure("a floor does its scenario's work")
            }
        return preset == .full ? (self == .paceJitter ? 500 : quick * 5) : quick
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
        switch self {
        case .paceJitter, .floorPace: return nil
        case .cancelRace, .floorCancelRace: return 0.5
        default: return 0.01
        }
    }

    /// Whether two threads race transitions of the subscriber, so that the schedule decides
    /// which ones run (cancel-race's cancels and inputs; async-step's and async-park's promise,
    /// fulfilled on another thread before or after the stepper returns).
    var racesTransitions: Bool {
        switch self {
        case .asyncStep, .asyncPark, .cancelRace: true
        case .syncStep, .staleStorm, .fanOut, .paceJitter, .directSync, .floorSync, .floorStep, .floorPingPong,
            .floorAsync, .floorAsyncPark, .floorStaleStorm, .floorCancelRace, .floorFanOut, .floorPace:
            false
        }
    }

    /// Whether the count of allocations is fixed by the code (``allocationTolerance(for:)``).
    public func allocationsAreExact(for subject: Subject) -> Bool { allocationTolerance(for: subject) != nil }

    /// Elements per iteration of the package-benchmark suite (Benchmarks/SteppingBenchmarks): a
    /// few milliseconds each, so one benchmark takes about a second (rounds for cancel-race, per
    /// pipeline for fan-out). The CI gate runs stepbench with the same counts so that the two
    /// tools' allocation counts can be compared for the same work.
    public var suiteElements: Int {
        if let shape = floorOf { return shape.suiteElements }
        return switch self {
        case .syncStep, .directSync, .floorSync, .floorStep, .staleStorm, .fanOut: 10_000
        case .asyncStep, .floorPingPong: 2_000
        case .asyncPark: 1_000  // the two allocation counters differ by a few allocations per run
        case .cancelRace: 50
        case .paceJitter: 20
        case .floorAsync, .floorAsyncPark, .floorStaleStorm, .floorCancelRace, .floorFanOut, .floorPace:
            preconditionFailure("a floor does its scenario's work")
        }
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
        return designs.map(Subject.design)
    }

    /// The rules this scenario races on several threads: stale-storm's other threads fulfil
    /// duplicate and stale promises while the stepper runs (S2, S3); cancel-race's cancel while
    /// inputs flow (C4).
    public var racedRules: [SteppingRule] {
        switch self {
        case .staleStorm: [.s2, .s3]
        case .cancelRace: [.c4]
        default: []
        }
    }

    /// The known issue that keeps `design` out of this scenario, if any: a raced rule the design
    /// declares broken fatally (``SteppingDesign/Traits/KnownIssue/isFatal``: a crash or a stall
    /// measures nothing). A design that breaks a raced rule harmlessly is measured (cancel-race
    /// then does not hold it to C4's one late call).
    public func exclusion(of design: SteppingDesign) -> SteppingDesign.Traits.KnownIssue? {
        racedRules.lazy.compactMap { design.traits.knownIssue($0) }.first { $0.isFatal }
    }

    /// Runs one repetition of `subject`: `.floor` for a floor scenario, a design for any other.
    public func run(_ subject: Subject, threads: Int, elements: Int) throws -> RepetitionResult {
        func stepping() throws -> SteppingDesign {
            guard let design = subject.design else {
                throw ScenarioFailure("\(rawValue) needs a design, not \(subject)")
            }
            return design
        }
        if isFloor && subject != .floor {
            throw ScenarioFailure("\(rawValue) is a floor: it measures no design (\(subject))")
        }
        return switch self {
        case .syncStep: try SyncStep.run(design: stepping(), elements: elements)
        case .asyncStep: try AsyncStep.run(design: stepping(), handOff: .spinYield, elements: elements)
        case .asyncPark: try AsyncStep.run(design: stepping(), handOff: .park, elements: elements)
        case .staleStorm: try StaleStorm.run(design: stepping(), threads: threads, elements: elements)
        case .cancelRace: try CancelRace.run(design: stepping(), threads: threads, elements: elements)
        case .fanOut: try FanOut.run(design: stepping(), threads: threads, elements: elements)
        case .paceJitter: try PaceJitter.run(design: stepping(), elements: elements)
        case .directSync: try DirectSync.run(design: stepping(), elements: elements)
        case .floorSync: try FloorSync.run(elements: elements)
        case .floorStep:
            try SyncStep.run(name: "floor-step", elements: elements) { FloorStep.makeSubscriber(stepper: $0) }
        case .floorPingPong: try FloorPingPong.run(elements: elements)
        case .floorAsync: try FloorAsync.run(handOff: .spinYield, elements: elements)
        case .floorAsyncPark: try FloorAsync.run(handOff: .park, elements: elements)
        case .floorStaleStorm: try FloorStaleStorm.run(threads: threads, elements: elements)
        case .floorCancelRace: try FloorCancelRace.run(threads: threads, elements: elements)
        case .floorFanOut: try FloorFanOut.run(threads: threads, elements: elements)
        case .floorPace: try FloorPace.run(elements: elements)
        }
    }
}
