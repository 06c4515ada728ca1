import Foundation
@testable import StepBenchKit
import StepBenchScenarios
import Testing

@Suite("stepbench merge: one repetition per process")
struct MergeTests {
    static func process(_ scale: Double) -> ResultsFile {
        var f = ResultsFileTests.sample()
        f.rows.removeAll { $0.status != "ok" }
        for i in f.rows.indices {
            f.rows[i].repetitions = f.rows[i].repetitions.map { var r = $0; r.elapsedNanoseconds = UInt64(Double(r.elapsedNanoseconds) * scale); return r }
        }
        return f
    }

    @Test func test_merge_eachProcessBecomesOneRepetitionOfItsMedians() throws {
        let files = [1.0, 1.1, 0.9].map(Self.process)
        let merged = try ResultsFile.mergedPerProcess(files)
        #expect(merged.aggregation?.hasPrefix("per-process medians of 3 runs") == true)
        let atomic = try #require(merged.rows.first { $0.design == "atomic" })
        #expect(atomic.repetitions.count == 3)
        // the sample's atomic repetitions are 1.000…1.004 ms per 10,000 elements: median 1.002 ms
        #expect(atomic.repetitions.map(\.elapsedNanoseconds) == [1_002_000, 1_102_200, 901_800])
        #expect(atomic.repetitions.allSatisfy { $0.latency?.p50 == 100 })
        let ratio = try #require(atomic.summary?.ratioToFloor)
        #expect(ratio.isFinite && abs(ratio - 2) < 0.01, "ratio to floor \(ratio)")
        let paired = Comparison.timingSamples(atomic, in: merged).first { $0.metric == "ns_per_element_vs_floor" }
        #expect(paired?.samples.count == 3)
        _ = try ResultsFile.encoder().encode(merged)
    }

    @Test func test_merge_refusesMixedConfigurationsAndMergedInputs() throws {
        var other = Self.process(1)
        other.rows.removeLast()
        #expect(throws: ResultsError.self) { try ResultsFile.mergedPerProcess([Self.process(1), other]) }
        let merged = try ResultsFile.mergedPerProcess([Self.process(1), Self.process(1)])
        #expect(throws: ResultsError.self) { try ResultsFile.mergedPerProcess([merged, merged]) }
        #expect(throws: ResultsError.self) { try ResultsFile.mergedPerProcess([]) }
    }
}
