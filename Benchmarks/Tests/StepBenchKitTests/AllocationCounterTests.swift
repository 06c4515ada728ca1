import Foundation
@_spi(Measurement) import Stepping
import SteppingConformance
import Testing

@testable import StepBenchKit
@testable import StepBenchScenarios

/// The allocation counter is exact: jemalloc's arena statistics with thread caches off.
/// The counts are process-wide, so these tests need the process to themselves: scripts/test
/// runs them alone (``TestSwitches/allocationTests``: `STEPBENCH_ALLOCATION_TESTS=1 swift test
/// --filter AllocationCounter`); in a plain parallel `swift test` they are skipped. Each check still takes the smallest of
/// three measurements (idle runtime threads can only add).
@Suite(
    "Allocation counter (jemalloc statistics)", .serialized,
    .enabled(
        if: TestSwitches.allocationTests,
        "needs the process to itself: run with STEPBENCH_ALLOCATION_TESTS=1 and --filter AllocationCounter"))
struct AllocationCounterTests {
    final class Object { var x = 0 }

    static func perElement(_ n: Int, tries: Int = 3, _ body: (Int) -> Void) throws -> Double {
        AllocationCounter.install()
        var best = Double.infinity
        for _ in 0..<tries {
            var meter = Meter()
            try meter.start()
            for i in 0..<n { body(i) }
            try meter.stop()
            best = min(best, Double(meter.allocations) / Double(n))
        }
        return best
    }

    @Test("jemalloc is the allocator and its statistics are readable, with tcache off")
    func test_allocator_isJemallocWithoutTcache() throws {
        #expect(AllocationCounter.isAvailable)
        #expect(AllocationCounter.allocatorDescription.hasPrefix("jemalloc 5"))
        #expect(AllocationCounter.allocatorDescription.contains("tcache:false"))
    }

    @Test("a loop that allocates exactly k objects per element reads k", arguments: [0, 1, 3])
    func test_allocationCounter_readsExactlyK(k: Int) throws {
        let perElement = try Self.perElement(50_000) { _ in
            for _ in 0..<k { withExtendedLifetime(Object()) {} }
        }
        #expect(abs(perElement - Double(k)) < 0.02, "read \(perElement) allocations per element, expected \(k)")
    }

    @Test("R2: the designs that claim zero allocations per step show it; the others show theirs")
    func test_rule_R2_zeroAllocationDesigns() throws {
        AllocationCounter.install()
        for design in SteppingDesign.allCases {
            var best = Double.infinity
            for _ in 0..<3 {
                best = min(
                    best,
                    try ScenarioKind.syncStep.run(.design(design), threads: 1, elements: 20_000).allocationsPerElement)
            }
            if design.traits.allocatesPerElement {
                #expect(best >= 1, "\(design) declares allocations per element; read \(best)")
            } else {
                #expect(best < 0.02, "\(design) claims none per element and allocates \(best)")
            }
        }
    }

    @Test(
        "a count the catalog calls exact in a racing scenario is the same in every run",
        arguments: [ScenarioKind.asyncPark, .asyncStep])
    func test_exactAllocationCounts_doNotFollowTheSchedule(scenario: ScenarioKind) throws {
        AllocationCounter.install()
        for design in SteppingDesign.allCases {
            guard let tolerance = scenario.allocationTolerance(for: .design(design)) else { continue }
            var counts: [Double] = []
            for run in 0..<7 {  // the first is a warm-up (one-time allocations), as in the tool
                let count = try scenario.run(.design(design), threads: 2, elements: scenario.suiteElements)
                    .allocationsPerElement
                if run > 0 { counts.append(count) }
            }
            let spread = counts.max()! - counts.min()!
            #expect(
                spread <= tolerance,
                "\(scenario.rawValue) \(design): \(counts) allocations per element in six runs, called exact within \(tolerance)"
            )
        }
    }

    /// Keeps a round's unfulfilled promise, so that its subscription stops after one input.
    final class HeldPromise: @unchecked Sendable { var promise: StepPromise? }  // one thread

    /// cancel-race's count is called exact within 0.5 per round on the grounds that the race
    /// adds no allocation per round: a round costs the same whether its canceller wins before the
    /// subscription arrives (no input flows) or after. Both orders, forced on one thread: on one
    /// core the canceller wins most rounds, on two it mostly loses, so a difference here showed
    /// as two counts of one build (the gate's malloc agreement, with one core busy beside it).
    @Test(
        "cancel-race: a round allocates the same whether cancel() comes before or after the subscription, for every design whose count there is exact"
    )
    func test_cancelRace_countDoesNotFollowWhoWins() throws {
        AllocationCounter.install()
        let scenario = ScenarioKind.cancelRace
        let rounds = 200
        func perRound(_ design: SteppingDesign, cancelFirst: Bool) throws -> Double {
            let held = HeldPromise()
            var best = Double.infinity
            for _ in 0..<3 {
                var meter = Meter()
                try meter.start()
                for _ in 0..<rounds {
                    let upstream = CountingUpstream(count: 100)
                    let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
                        if case .input(_, let promise) = event { held.promise = promise }
                    }
                    if cancelFirst { subscriber.cancel() }
                    upstream.subscribe(subscriber)
                    SteppingDesign.waitUntilIdle(subscriber as AnyObject)
                    if !cancelFirst { subscriber.cancel() }
                    SteppingDesign.waitUntilIdle(subscriber as AnyObject)
                    held.promise = nil
                    let cancels = upstream.conduit?.cancels ?? 0
                    #expect(cancels == 1, "\(design): upstream cancelled \(cancels) times")
                }
                try meter.stop()
                best = min(best, Double(meter.allocations) / Double(rounds))
            }
            return best
        }
        var checked = 0
        for design in SteppingDesign.allCases {
            guard let tolerance = scenario.allocationTolerance(for: .design(design)) else { continue }
            let lost = try perRound(design, cancelFirst: false)
            let won = try perRound(design, cancelFirst: true)
            #expect(
                abs(lost - won) < tolerance,
                "\(design): \(lost) allocations per round when the subscription comes first, \(won) when cancel() does (exact within \(tolerance))"
            )
            checked += 1
        }
        #expect(checked >= 4, "only \(checked) designs have an exact cancel-race count")
    }

    /// Holds the test-only design's per-element allocation so that it cannot be optimised away.
    final class Holder: @unchecked Sendable { var last: Object? }  // written by the one stepping thread

    /// A synchronous design that claims no allocation per element.
    static let zeroAllocating = SteppingDesign.allCases.first {
        $0.deliversSynchronously && !$0.traits.allocatesPerElement
    }!

    /// Runs sync-step 3 times for `makeSubscriber` and returns a results file with that row,
    /// named after ``zeroAllocating`` so that `compare` lines it up with the real one.
    static func resultsFile(elements n: Int, _ makeSubscriber: SyncStep.MakeSubscriber) throws -> ResultsFile {
        var file = ResultsFileTests.sample()
        let reps = try (0..<3).map { _ in
            try SyncStep.run(name: zeroAllocating.name, elements: n, makeSubscriber: makeSubscriber)
        }
        file.rows = [
            .init(
                scenario: .syncStep, design: .design(zeroAllocating), threads: 1, elements: n, status: .ok,
                failure: nil,
                repetitions: reps, summary: ResultsFile.Summary(reps))
        ]
        return file
    }

    @Test(
        "end to end: the allocation gate flags a test-only design that allocates once more per element than a design that allocates none"
    )
    func test_allocationGate_flagsOneMoreAllocationPerElement() throws {
        AllocationCounter.install()
        let n = 20_000
        let none: SyncStep.MakeSubscriber = { Self.zeroAllocating.makeSubscriber(stepper: $0) }
        let holder = Holder()
        let allocating: SyncStep.MakeSubscriber = { stepper in
            Self.zeroAllocating.makeSubscriber { event in
                holder.last = Object()  // the one extra allocation per element
                stepper(event)
            }
        }
        let baseline = try Self.resultsFile(elements: n, none)
        let same = try Self.resultsFile(elements: n, none)
        let worse = try Self.resultsFile(elements: n, allocating)

        let aa = Comparison.compare(baseline: baseline, current: same)
        #expect(aa.exactRegressions.isEmpty, "\(Self.zeroAllocating) against itself: \(aa.exactRegressions)")

        let ab = Comparison.compare(baseline: baseline, current: worse)
        let row = try #require(ab.rows.first { $0.metric == .allocationsPerElement })
        #expect(row.verdict == .regression)
        #expect(
            abs((row.current ?? 0) - (row.baseline ?? 0) - 1) < 0.02,
            "expected exactly one more allocation per element: \(String(describing: row.baseline)) → \(String(describing: row.current))"
        )
        #expect(ab.exactRegressions.map(\.metric) == [.allocationsPerElement])
        #expect(try ab.render(.text).contains("REGRESSION"))
    }
}
