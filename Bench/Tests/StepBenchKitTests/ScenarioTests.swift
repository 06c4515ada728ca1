import Stepping
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
    ]

    @Test("each scenario × design × threads completes and verifies", arguments: ScenarioKind.allCases)
    func test_scenario_runsAndVerifies(scenario: ScenarioKind) throws {
        AllocationCounter.install()
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
        for scenario in ScenarioKind.allCases where !scenario.isFloor {
            guard let floor = scenario.floor else { Issue.record("\(scenario) has no floor"); continue }
            #expect(floor.isFloor && floor.floorOf == scenario)
            #expect(floor.threadCounts(requested: [1, 2, 4]) == scenario.threadCounts(requested: [1, 2, 4]))
            #expect(
                floor.elements(.quick) == scenario.elements(.quick) && floor.suiteElements == scenario.suiteElements)
            #expect(floor.hasLatency == scenario.hasLatency)
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
