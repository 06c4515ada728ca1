import Foundation
import StepBenchScenarios
import Testing

@testable import StepBenchKit

@Suite("stepbench merge: one repetition per process")
struct MergeTests {
    static func process(_ scale: Double) -> ResultsFile {
        var f = ResultsFileTests.sample()
        f.rows.removeAll { $0.status != .ok }
        for i in f.rows.indices {
            f.rows[i].repetitions = f.rows[i].repetitions.enumerated().map { j, rep in
                var r = rep
                r.elapsedNanoseconds = UInt64(Double(r.elapsedNanoseconds) * scale)
                r.cpuNanoseconds = UInt64(Double(r.cpuNanoseconds) * scale)
                r.allocations = UInt64(100 * scale) + UInt64(j)  // median over j = 0…4: +2
                r.latency?.p99 = UInt64(300 * scale)
                return r
            }
        }
        return f
    }

    @Test func test_merge_eachProcessBecomesOneRepetitionOfItsMedians() throws {
        let files = [1.0, 1.1, 0.9].map(Self.process)
        let merged = try ResultsFile.mergedPerProcess(files)
        #expect(merged.declaredKind == .merged)
        #expect(merged.aggregation?.hasPrefix("per-process medians of 3 runs") == true)
        let atomic = try #require(merged.rows.first { $0.design == "atomic" })
        #expect(atomic.repetitions.count == 3)
        // the sample's atomic repetitions are 1.000…1.004 ms per 10,000 elements: median 1.002 ms
        #expect(atomic.repetitions.map(\.elapsedNanoseconds) == [1_002_000, 1_102_200, 901_800])
        #expect(atomic.repetitions.allSatisfy { $0.latency?.p50 == 100 })
        #expect(atomic.repetitions.map(\.cpuNanoseconds) == [990_000, 1_089_000, 891_000])
        #expect(atomic.repetitions.map(\.allocations) == [102, 112, 92])
        #expect(atomic.repetitions.map { $0.latency?.p99 } == [300, 330, 270])
        let ratio = try #require(atomic.summary?.ratioToFloor)
        #expect(ratio.isFinite && abs(ratio - 2) < 0.01, "ratio to floor \(ratio)")
        let paired = Comparison.timingSamples(atomic, in: merged).first { $0.metric == .nsPerElementVsFloor }
        #expect(paired?.samples.count == 3)
        _ = try JSONOutput.encode(merged)
    }

    @Test func test_merge_refusesMixedConfigurationsAndMergedInputs() throws {
        var other = Self.process(1)
        other.rows.removeLast()
        expectFailure(.incompatible) { try ResultsFile.mergedPerProcess([Self.process(1), other]) }
        let merged = try ResultsFile.mergedPerProcess([Self.process(1), Self.process(1)])
        expectFailure(.wrongKind) { try ResultsFile.mergedPerProcess([merged, merged]) }
        expectFailure(.missingInput) { try ResultsFile.mergedPerProcess([]) }
    }

    @Test func test_merge_aFailureInOneProcessFailsTheRow() throws {
        var broken = Self.process(1)
        broken.rows[1].status = .failed
        broken.rows[1].repetitions = []
        broken.rows[1].failure = "sync-step atomic: 3 of 10000 inputs delivered"
        let merged = try ResultsFile.mergedPerProcess([Self.process(1), broken, Self.process(1)])
        let atomic = try #require(merged.rows.first { $0.design == "atomic" })
        #expect(atomic.status == .failed && atomic.repetitions.isEmpty && atomic.summary == nil)
        #expect(atomic.failure?.contains("3 of 10000") == true)
        #expect(merged.rows.first { $0.design == "seed" }?.status == .ok)
    }

    @Test func test_combine_keepsEveryRowAndProfileAsMeasured() throws {
        var small = ResultsFileTests.sample()
        small.rows = small.rows.filter { $0.scenario == .asyncStep }
        var large = ResultsFileTests.sample()
        large.rows.removeAll { $0.scenario == .asyncStep }
        var profile = ResultsFileTests.sample()
        profile.rows = []
        profile.profiles = [
            .init(
                scenario: .syncStep, design: "atomic", elementsLow: 4_000, elementsHigh: 12_000,
                instructionsLow: 4_000_000, instructionsHigh: 12_000_000, instructionsPerElement: 1_000,
                topFunctions: [])
        ]
        let combined = try ResultsFile.combined([large, small, profile])
        #expect(combined.declaredKind == .combination)
        #expect(combined.rows == large.rows + small.rows)
        #expect(combined.profiles == profile.profiles)
        #expect(combined.aggregation == nil && combined.configuration == large.configuration)
        expectFailure(.incompatible) { try ResultsFile.combined([large, large]) }
        var elsewhere = small
        elsewhere.machine.gitCommit = "def"
        expectFailure(.incompatible) { try ResultsFile.combined([large, elsewhere]) }
        // the report's combination: across builds, a profile file first, the refusal naming both files
        var profileFirst = profile
        profileFirst.machine.gitCommit = "def"
        profileFirst.configuration.handoff = "none (callgrind, single thread)"
        let report = try ResultsFile.combined([profileFirst, large], acrossBuilds: true)
        #expect(report.configuration == large.configuration && report.rows == large.rows)
        #expect(report.profiles == profile.profiles)
        do {
            _ = try ResultsFile.combined([large, small, large], names: ["a.json", "b.json", "c.json"])
            Issue.record("two files that measured one row were combined")
        } catch let error as ResultsError {
            #expect("\(error)".contains("a.json") && "\(error)".contains("c.json"), "\(error)")
        }
    }

    @Test func test_machineID_isTheCPUModelAndCores() {
        #expect(MachineFingerprint.machineID(cpuModel: "AMD EPYC", cores: 2) == "amd-epyc-2c")
        #expect(
            MachineFingerprint.machineID(cpuModel: "Intel(R) Xeon(R) CPU @ 2.20GHz", cores: 4)
                == "intel-r-xeon-r-cpu-2-20ghz-4c")
        #expect(MachineFingerprint.machineID(cpuModel: "", cores: 1) == "unknown-cpu-1c")
    }

    @Test(
        "each writer says which document it wrote; a file without that is converted on read, and merge takes runs only")
    func test_kind_declaredByEachWriterConvertedForOlderFiles() throws {
        let run = Self.process(1)
        let merged = try ResultsFile.mergedPerProcess([run, run])
        let profile = ResultsFile.profiled(
            [
                .init(
                    scenario: .syncStep, design: "atomic", elementsLow: 4_000, elementsHigh: 12_000,
                    instructionsLow: 4_000_000, instructionsHigh: 12_000_000, instructionsPerElement: 1_000,
                    topFunctions: [])
            ], paths: [], machine: run.machine, elements: 12_000)
        #expect(profile.declaredKind == .profile)
        let combination = try ResultsFile.combined([run, profile], acrossBuilds: true)
        // written as "kind", read back as written
        for file in [merged, profile, combination] {
            let json = try #require(try JSONSerialization.jsonObject(with: JSONOutput.encode(file)) as? [String: Any])
            #expect(json["kind"] as? String == file.declaredKind?.rawValue)
            let back = try JSONDecoder().decode(ResultsFile.self, from: JSONOutput.encode(file))
            #expect(back.declaredKind == file.declaredKind && back.kind == file.declaredKind)
        }
        // an older file, without "kind": what its writer made, from what it holds
        let expected: [(ResultsFile, ResultsFile.Kind)] = [
            (run, .run), (merged, .merged), (profile, .profile), (combination, .combination),
        ]
        for (file, kind) in expected {
            var older = file
            older.declaredKind = nil
            #expect(older.kind == kind, "\(kind)")
            let json = try JSONSerialization.jsonObject(with: JSONOutput.encode(older)) as? [String: Any]
            #expect(json?["kind"] == nil)
        }
        // merge takes the runs themselves
        for file in [merged, profile, combination] {
            let refused = expectFailure(.wrongKind) { try ResultsFile.mergedPerProcess([run, file]) }
            #expect(refused?.description.contains(file.kind == .merged ? "already merged" : "not a run") == true)
        }
    }
}
