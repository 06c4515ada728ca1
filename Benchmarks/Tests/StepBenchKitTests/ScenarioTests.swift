import Dispatch
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Testing

@testable import StepBenchKit
@testable import StepBenchScenarios

/// Every scenario runs for every design at a small size and verifies its own outcome.
@Suite("Scenarios verify their outcome")
struct ScenarioTests {
    static let sizes: [ScenarioKind: Int] = [
        .syncStep: 2_000, .asyncStep: 300, .staleStorm: 2_000, .cancelRace: 20, .fanOut: 1_000,
        .paceJitter: 15, .floorSync: 2_000, .floorStep: 2_000, .floorPingPong: 300, .floorAsync: 300,
        .floorStaleStorm: 2_000,
        .floorCancelRace: 20, .floorFanOut: 1_000, .floorPace: 15, .asyncPark: 100, .floorAsyncPark: 100,
        .directSync: 2_000, .plainSync: 2_000, .plainUpstream: 2_000,
    ]

    /// A direct row for the test process (the tool's are the peers', which it does not link): an
    /// operator chain standing for a library, asking for one input at a time as every peer does
    /// (direct-sync holds a direct row to sync-step's demand), registered once for the process.
    static let directRows: Void = DirectRow.register([
        DirectRow(of: .relayedAtomic) { upstream, each, end in
            upstream.flatMap(maxPublishers: .max(1)) { Just($0) }
                .sink(receiveCompletion: { _ in end() }, receiveValue: each)
        }
    ])

    /// A plain program for the test process: the same chain on either source, as a user's
    /// program, awaited to its end (its `sink`'s completion), registered once for the process.
    static let plainRows: Void = PlainRow.register([
        PlainRow(of: .relayedAtomic) { source, each in
            let done = DispatchSemaphore(value: 0)
            let publisher: AnyPublisher<Int, Never>
            switch source.value {
            case .sequence(let n): publisher = (0..<n).publisher.eraseToAnyPublisher()
            case .suite(let upstream): publisher = upstream
            }
            let c = publisher.flatMap(maxPublishers: .max(1)) { Just($0) }
                .sink(receiveCompletion: { _ in done.signal() }, receiveValue: each)
            done.wait()
            withExtendedLifetime(c) {}
        }
    ])

    @Test("each scenario × design × threads completes and verifies", arguments: ScenarioKind.allCases)
    func test_scenario_runsAndVerifies(scenario: ScenarioKind) throws {
        AllocationCounter.install()
        _ = Self.directRows
        _ = Self.plainRows
        let n = try #require(Self.sizes[scenario])
        for subject in scenario.subjects {
            for threads in scenario.threadCounts(requested: [1, 2]) {
                let r = try scenario.run(subject, threads: threads, elements: n)
                let pipelines = [.fanOut, .floorFanOut].contains(scenario)
                #expect(r.elements == (pipelines ? n * threads : n))
                #expect((r.threadNanoseconds?.count ?? 0) == (pipelines ? threads : 0))
                #expect(r.elapsedNanoseconds > 0)
                #expect((r.latency != nil) == scenario.hasLatency, "\(scenario) \(subject)")
                #expect((r.sideEvents != nil) == (scenario.sideMetric != nil), "\(scenario): side events")
            }
        }
    }

    @Test("every scenario has a floor of its own shape: same threads, same work")
    func test_everyScenarioHasItsOwnFloor() {
        // the direct and plain rows are compared to their peer and to each other, not to a floor
        for scenario in ScenarioKind.allCases
        where !scenario.isFloor && ![.directSync, .plainSync, .plainUpstream].contains(scenario) {
            guard let floor = scenario.floor else { Issue.record("\(scenario) has no floor"); continue }
            #expect(floor.isFloor && floor.floorOf == scenario)
            #expect(floor.threadCounts(requested: [1, 2, 4]) == scenario.threadCounts(requested: [1, 2, 4]))
            #expect(
                floor.elements(.quick) == scenario.elements(.quick) && floor.suiteElements == scenario.suiteElements)
            #expect(floor.hasLatency == scenario.hasLatency)
        }
    }

    @Test("each scenario is declared once, whole: elements where it does its own work, one scenario per question")
    func test_declarations() {
        for scenario in ScenarioKind.allCases {
            let d = scenario.declaration
            // a floor that stands for a scenario does that scenario's work; every other declares its own
            #expect((d.elements == nil) == (scenario.floorOf != nil), "\(scenario)")
            #expect(!d.isFloor || d.floor == nil, "\(scenario): a floor has no floor")
            #expect(d.roles.allSatisfy { $0 == .profiled || $0 == .apiFloor || !d.isFloor }, "\(scenario)")
            if d.roles.contains(.abtest) { #expect(d.floor != nil, "\(scenario): the A/B pairs it with its floor") }
        }
        for role in [
            ScenarioDeclaration.Role.perElement, .crossThread, .asynchronousVerdict, .cancel, .apiFloor, .direct,
            .plain, .plainUpstream,
        ] {
            #expect(ScenarioKind.with(role).count == 1, "\(role)")
        }
        #expect(
            ScenarioKind.with(.perElement) == [.syncStep] && ScenarioKind.with(.contended) == [.staleStorm, .fanOut])
    }

    @Test("direct-sync is sync-step's shape for a peer's library alone, and runs only designs with a direct row")
    func test_directSync_hasSyncStepsShapeAndRunsOnlyDirectRows() throws {
        AllocationCounter.install()
        _ = Self.directRows
        let direct = ScenarioKind.directSync
        #expect(direct.floor == nil && !direct.isFloor)  // compared to its peer's sync-step row, not a floor
        #expect(direct.threadCounts(requested: [1, 2, 4]) == ScenarioKind.syncStep.threadCounts(requested: [1, 2, 4]))
        #expect(direct.elements(.quick) == ScenarioKind.syncStep.elements(.quick))
        #expect(direct.suiteElements == ScenarioKind.syncStep.suiteElements)
        #expect(direct.subjects(among: [.atomic, .relayedAtomic]) == [.design(.relayedAtomic)])
        #expect { try direct.run(.design(.atomic), threads: 1, elements: 10) } throws: {
            "\($0)".contains("no direct row")
        }
        let r = try direct.run(.design(.relayedAtomic), threads: 1, elements: 1_000)
        #expect(r.elements == 1_000)
    }

    @Test(
        "plain-sync and plain-upstream run a peer's plain program on either source, only for designs with one, and verify it"
    )
    func test_plainRows_runOnlyPlainProgramsAndVerify() throws {
        AllocationCounter.install()
        _ = Self.plainRows
        for scenario in [ScenarioKind.plainSync, .plainUpstream] {
            #expect(scenario.floor == nil && !scenario.isFloor)  // compared to the direct row, not a floor
            #expect(scenario.subjects(among: [.atomic, .relayedAtomic]) == [.design(.relayedAtomic)])
            #expect { try scenario.run(.design(.atomic), threads: 1, elements: 10) } throws: {
                "\($0)".contains("no plain program")
            }
            let r = try scenario.run(.design(.relayedAtomic), threads: 1, elements: 1_000)
            #expect(r.elements == 1_000 && r.elapsedNanoseconds > 0)
        }
    }

    @Test("verification fails loudly on a wrong outcome")
    func test_orderCheck_catchesLossAndDisorder() {
        let check = OrderCheck()
        check.see(0); check.see(2); check.finish()
        #expect(throws: ScenarioFailure.self) { try check.verify(count: 3, what: "planted") }
        let short = OrderCheck()
        short.see(0); short.finish()
        #expect { try short.verify(count: 2, what: "short") } throws: { "\($0)".contains("1 of 2") }
        let unfinished = OrderCheck()
        unfinished.see(0)
        #expect { try unfinished.verify(count: 1, what: "open") } throws: { "\($0)".contains("completion") }
    }
}
