import Foundation
@testable import StepBenchKit
import Stepping
import Testing
@testable import StepBenchScenarios

/// The allocation counter is exact: jemalloc's arena statistics with thread caches off.
/// The counts are process-wide, so these tests need the process to themselves: scripts/test
/// runs them alone (`STEPBENCH_ALLOCATION_TESTS=1 swift test --filter AllocationCounter`);
/// in a plain parallel `swift test` they are skipped. Each check still takes the smallest of
/// three measurements (idle runtime threads can only add).
@Suite("Allocation counter (jemalloc statistics)", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["STEPBENCH_ALLOCATION_TESTS"] == "1",
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

    @Test("R2: the designs that claim zero allocations per step show it; seed shows its own")
    func test_rule_R2_zeroAllocationDesigns() throws {
        AllocationCounter.install()
        for design in SteppingDesign.allCases {
            var best = Double.infinity
            for _ in 0..<3 {
                best = min(best, try ScenarioKind.syncStep.run(design: design, threads: 1, elements: 20_000).allocationsPerElement)
            }
            switch design {
            case .locked, .mutex, .atomic:
                #expect(best < 0.02, "\(design) allocates \(best) per element")
            case .seed:
                #expect(best >= 2, "seed allocates closures per element, read \(best)")
            case .actor:
                #expect(best > 0, "actor's mailbox allocates; read \(best)")
            }
        }
    }
}
