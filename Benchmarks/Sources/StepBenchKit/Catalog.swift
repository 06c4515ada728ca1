import StepBenchScenarios
@_spi(Measurement) import Stepping

/// What exists and what is exact, as the scripts and the report read it
/// (`stepbench list --format json`): the designs, the scenarios with their floors, element counts
/// and thread counts, the package-benchmark suite's benchmarks, and which allocation counts are
/// fixed by the code. Everything here is derived from ``SteppingDesign`` and ``ScenarioKind``;
/// scripts never repeat these lists.
public struct Catalog: Codable, Equatable, Sendable {
    public struct Scenario: Codable, Equatable, Sendable {
        public var name: String
        public var summary: String
        public var isFloor: Bool
        /// The scenario this one is compared to (nil: none yet).
        public var floor: String?
        public var elementsQuick: Int
        public var elementsFull: Int
        /// Thread counts for the default request 1,2,4.
        public var threads: [Int]
        /// Designs (floors: "floor") whose allocation count in this scenario is exact.
        public var exactAllocations: [String]
        /// The metric `compare` decides this scenario on (``ScenarioKind/primaryMetric``).
        public var primaryMetric: String? = nil
        /// What one unit of work is, "element" or "round" (``ScenarioKind/unit``).
        public var unit: String? = nil
        /// Whether throughput grows with the threads (``ScenarioKind/throughputScalesWithThreads``).
        public var throughputScalesWithThreads: Bool? = nil
    }

    /// One path driver (``StepPath``): what `stepbench profile` counts per event.
    public struct Path: Codable, Equatable, Sendable {
        public var name: String
        public var summary: String
        /// What one event is ("element", "stale call", "subscription").
        public var event: String
        /// What the path is driven for (``Subject``): "floor" where it has one, "floor-step",
        /// then the designs.
        public var subjects: [String]
        /// Of those, the ones whose counts are exact, which `compare` gates.
        public var exact: [String]
    }

    /// One `stepbench run` of the CI gate's allocation check: these scenarios at the suite's
    /// elements per iteration (so that the two tools' counts are of the same work).
    public struct GateRun: Codable, Equatable, Sendable {
        public var elements: Int
        public var scenarios: [String]
    }

    /// One benchmark of the package-benchmark suite.
    public struct Benchmark: Codable, Equatable, Sendable {
        public var name: String
        public var scenario: String
        public var design: String
        public var threads: Int
        public var elements: Int
        public var exactAllocations: Bool
        /// Allocations per element two exact counts may differ by (absent when not exact).
        public var allocationTolerance: Double?
    }

    public var designs: [String]
    /// The designs that call the stepper on their own executor (`receive(_:)` returns `.none`).
    public var asynchronousDesigns: [String]
    public var defaultDesign: String
    /// The design rows are compared to (`ratioToSeed`): the faithful port of the original.
    public var referenceDesign: String? = nil
    /// The results-file schemas this tool reads, the current one first.
    public var readableSchemas: [String] = []
    public var scenarios: [Scenario]
    public var benchmarks: [Benchmark]
    /// The designs whose single-thread allocation counts do not follow thread timing: the CI
    /// gate's allocation runs measure these (its profile measures every design).
    public var gateDesigns: [String]
    /// The scenarios `stepbench profile` counts instructions in.
    public var profiledScenarios: [String]
    /// The timing protocol of the gate's information-only comparison and of `scripts/abtest`: these
    /// scenarios (a design and the floor it is paired with) at this many elements per repetition.
    public var timingScenarios: [String]
    public var timingElements: Int
    /// The path drivers of `stepbench profile` (absent in older files: none).
    public var paths: [Path]
    /// The contended timing protocol of `scripts/abtest` (`stepbench run --preset brief
    /// --threads 2`): every scenario whose primary metric a design's synchronisation moves, with
    /// its floor, at no more threads than a two-core machine has.
    public var abtestScenarios: [String] = []
    /// The counts per element that explain a timing (a row summary's `counts`), in the order
    /// tables show them.
    public var countMetrics: [String] = []
    /// Where the asynchronous designs' verdict for a promise fulfilled on another thread is read:
    /// the scenario whose hand-offs park (a spinning hand-off starves their executor's thread).
    public var asynchronousVerdictScenario: String? = nil
    /// The stepping API with no synchronisation, as a floor of sync-step's shape (floor-step):
    /// what a design costs over it is its synchronisation.
    public var apiFloorScenario: String? = nil
    /// The questions a report answers, each by the scenario that answers it: the pure cost per
    /// element (one thread; its profile is the instruction counts'), a promise fulfilled on
    /// another thread, and contention (at the most threads measured).
    public var perElementScenario: String? = nil
    public var crossThreadScenario: String? = nil
    public var contendedScenarios: [String] = []
    /// Where `cancel()` racing the inputs is measured: its p50 is `cancel()` → upstream cancelled.
    public var cancelScenario: String? = nil
    /// The rules each design declares it breaks (`SteppingDesign.Traits.knownIssues`), by rule id;
    /// designs that declare none are absent. `stepbench conform` reports these as known issues.
    public var knownIssues: [String: [String]] = [:]
    /// The runs the CI gate makes for its allocation check (`stepbench gate`): every
    /// scenario with an exact count for a gate design (or a floor), grouped by the suite's
    /// elements, most elements first.
    public var gateRuns: [GateRun] = []
    /// The peers: designs that stand for a library Swift users already have, each with a direct
    /// row (``DirectRow``), measured by ``directScenario`` without the stepper contract, so that a
    /// peer's cost splits into its library's and its bridge's. Absent (nil) in files written
    /// before the tool named its peers.
    public var peers: [String]? = nil
    /// The scenario of the peers' direct rows (direct-sync), compared to ``perElementScenario``.
    public var directScenario: String? = nil

    /// The gate's allocation runs of `benchmarks` (see ``gateRuns``).
    static func gateRuns(_ benchmarks: [Benchmark], gateDesigns: [String], floors: Set<String>) -> [GateRun] {
        var groups: [Int: [String]] = [:]
        for b in benchmarks where b.exactAllocations && (gateDesigns.contains(b.design) || floors.contains(b.scenario))
        {
            if !(groups[b.elements] ?? []).contains(b.scenario) { groups[b.elements, default: []].append(b.scenario) }
        }
        return groups.sorted { $0.key > $1.key }.map { GateRun(elements: $0.key, scenarios: $0.value) }
    }

    public static var current: Catalog {
        let scenarios = ScenarioKind.allCases.map { s -> Scenario in
            return Scenario(
                name: s.rawValue, summary: s.summary, isFloor: s.isFloor, floor: s.floor?.rawValue,
                elementsQuick: s.elements(.quick), elementsFull: s.elements(.full),
                threads: s.threadCounts(requested: [1, 2, 4]),
                exactAllocations: s.subjects.filter { s.allocationsAreExact(for: $0) }.map(\.name),
                primaryMetric: s.primaryMetric.rawValue, unit: s.unit,
                throughputScalesWithThreads: s.throughputScalesWithThreads)
        }
        let benchmarks = ScenarioKind.allCases.flatMap { s -> [Benchmark] in
            s.subjects.map { subject in
                Benchmark(
                    name: s.benchmarkName(for: subject), scenario: s.rawValue, design: subject.name,
                    threads: s.suiteThreads, elements: s.suiteElements,
                    exactAllocations: s.allocationsAreExact(for: subject),
                    allocationTolerance: s.allocationTolerance(for: subject))
            }
        }
        let gateDesigns = Gate.designs(among: SteppingDesign.described).map(\.rawValue)
        return Catalog(
            designs: SteppingDesign.described.map(\.rawValue),
            asynchronousDesigns: SteppingDesign.described.filter { !$0.deliversSynchronously }.map(\.rawValue),
            defaultDesign: SteppingDesign.default.rawValue, referenceDesign: SteppingDesign.reference.rawValue,
            readableSchemas: ResultsFile.readableSchemas,
            scenarios: scenarios, benchmarks: benchmarks,
            gateDesigns: gateDesigns,
            profiledScenarios: Profiler.scenarios.map(\.rawValue),
            timingScenarios: MeasuringProtocol.timing.scenarios.map(\.rawValue),
            timingElements: MeasuringProtocol.timing.elements!,
            paths: StepPath.allCases.map { path in
                let subjects = Subject.all.filter { path.isDefined(for: $0) }
                return Path(
                    name: path.rawValue, summary: path.summary, event: path.event, subjects: subjects.map(\.name),
                    exact: subjects.filter { path.countsAreExact(for: $0) }.map(\.name))
            },
            abtestScenarios: MeasuringProtocol.abtest.scenarios.map(\.rawValue),
            countMetrics: ([
                .staleCallsPerElement, .inputsPerRound, .voluntarySwitchesPerElement, .involuntarySwitchesPerElement,
            ]
                + Metric.contention.map(\.metric)).map(\.rawValue),
            asynchronousVerdictScenario: ScenarioKind.with(.asynchronousVerdict).first?.rawValue,
            apiFloorScenario: ScenarioKind.with(.apiFloor).first?.rawValue,
            perElementScenario: ScenarioKind.with(.perElement).first?.rawValue,
            crossThreadScenario: ScenarioKind.with(.crossThread).first?.rawValue,
            contendedScenarios: ScenarioKind.with(.contended).map(\.rawValue),
            cancelScenario: ScenarioKind.with(.cancel).first?.rawValue,
            knownIssues: SteppingDesign.described.reduce(into: [:]) { issues, design in
                let rules = design.traits.knownIssues.map(\.rule.rawValue)
                if !rules.isEmpty { issues[design.name] = rules }
            },
            gateRuns: gateRuns(
                benchmarks, gateDesigns: gateDesigns,
                floors: Set(ScenarioKind.allCases.filter(\.isFloor).map(\.rawValue))),
            peers: DirectRow.registered.map(\.peer.rawValue),
            directScenario: ScenarioKind.with(.direct).first?.rawValue)
    }
}

extension Catalog {
    /// Results files carry the catalog the tool had when it wrote them, so an older catalog must
    /// still decode: the fields added since the first such files default to "none".
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            designs: try c.decode([String].self, forKey: .designs),
            asynchronousDesigns: try c.decodeIfPresent([String].self, forKey: .asynchronousDesigns) ?? [],
            defaultDesign: try c.decode(String.self, forKey: .defaultDesign),
            referenceDesign: try c.decodeIfPresent(String.self, forKey: .referenceDesign),
            readableSchemas: try c.decodeIfPresent([String].self, forKey: .readableSchemas) ?? [],
            scenarios: try c.decode([Scenario].self, forKey: .scenarios),
            benchmarks: try c.decode([Benchmark].self, forKey: .benchmarks),
            gateDesigns: try c.decode([String].self, forKey: .gateDesigns),
            profiledScenarios: try c.decode([String].self, forKey: .profiledScenarios),
            timingScenarios: try c.decodeIfPresent([String].self, forKey: .timingScenarios) ?? [],
            timingElements: try c.decodeIfPresent(Int.self, forKey: .timingElements) ?? 0,
            paths: try c.decodeIfPresent([Path].self, forKey: .paths) ?? [],
            abtestScenarios: try c.decodeIfPresent([String].self, forKey: .abtestScenarios) ?? [],
            countMetrics: try c.decodeIfPresent([String].self, forKey: .countMetrics) ?? [],
            asynchronousVerdictScenario: try c.decodeIfPresent(String.self, forKey: .asynchronousVerdictScenario),
            apiFloorScenario: try c.decodeIfPresent(String.self, forKey: .apiFloorScenario),
            perElementScenario: try c.decodeIfPresent(String.self, forKey: .perElementScenario),
            crossThreadScenario: try c.decodeIfPresent(String.self, forKey: .crossThreadScenario),
            contendedScenarios: try c.decodeIfPresent([String].self, forKey: .contendedScenarios) ?? [],
            cancelScenario: try c.decodeIfPresent(String.self, forKey: .cancelScenario),
            knownIssues: try c.decodeIfPresent([String: [String]].self, forKey: .knownIssues) ?? [:],
            gateRuns: try c.decodeIfPresent([GateRun].self, forKey: .gateRuns) ?? [],
            peers: try c.decodeIfPresent([String].self, forKey: .peers),
            directScenario: try c.decodeIfPresent(String.self, forKey: .directScenario))
    }
}
