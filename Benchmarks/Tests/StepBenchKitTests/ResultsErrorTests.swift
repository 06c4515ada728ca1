import Foundation
import StepBenchScenarios
import Testing

@testable import StepBenchCLI
@testable import StepBenchKit

/// Every failure has a kind, made where it happens; tests and callers tell failures apart by
/// kind, and the exit status follows from it.
@Suite("typed failures")
struct ResultsErrorTests {
    @Test("reading a file: missing, not JSON, not an object, another schema, malformed")
    func test_read_eachProblemHasItsKind() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func file(_ name: String, _ text: String) throws -> URL {
            let url = folder.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url
        }
        expectFailure(.unreadable) { try ResultsFile.read(folder.appendingPathComponent("missing.json")) }
        expectFailure(.wrongKind) { try ResultsFile.read(file("text.json", "not json")) }
        expectFailure(.wrongKind) { try ResultsFile.read(file("list.json", "[1, 2]")) }
        let other = expectFailure(.wrongKind) {
            try ResultsFile.read(file("other.json", #"{"schema": "stepbench-noise/1"}"#))
        }
        #expect(other?.description.contains("'stepbench-noise/1'") == true)
        expectFailure(.malformed) { try ResultsFile.read(file("bare.json", #"{"schema": "stepbench/2"}"#)) }
        expectFailure(.wrongKind) { try NoiseProfile.read(file("run.json", #"{"schema": "stepbench/2"}"#)) }
        expectFailure(.unreadable) { try RunFolder.read(folder.appendingPathComponent("nowhere").path) }
        // a noise profile: of its schema but broken is malformed; another document is another kind
        expectFailure(.malformed) {
            try NoiseProfile.read(file("noise.json", #"{"schema": "\#(NoiseProfile.currentSchema)"}"#))
        }
        expectFailure(.wrongKind) { try NoiseProfile.read(file("list-noise.json", "[]")) }
    }

    @Test("a noise profile takes separate runs: merged rows are refused, inside a combination too")
    func test_noise_refusesPerProcessRowsWhereverTheyAre() throws {
        let run = MergeTests.process(1)
        let merged = try ResultsFile.mergedPerProcess([run, run])
        var profile = run
        profile.rows = []
        profile.declaredKind = .profile
        profile.profiles = [
            .init(
                scenario: .syncStep, design: "atomic", elementsLow: 4_000, elementsHigh: 12_000,
                instructionsLow: 4_000_000, instructionsHigh: 12_000_000, instructionsPerElement: 1_000,
                topFunctions: [])
        ]
        let combination = try ResultsFile.combined([merged, profile])
        #expect(combination.kind == .combination && combination.aggregation != nil)
        for perProcess in [merged, combination] {
            expectFailure(.wrongKind) { try NoiseProfile.measure(runs: [run, perProcess, run]) }
        }
    }

    @Test("an output that cannot be written is unwritable, whichever step fails")
    func test_write_unwritable() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let blocker = folder.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: blocker)
        // the folder to write in is a file: creating it fails, not the rename
        expectFailure(.unwritable) {
            try ComparisonTests.file(scale: 1).write(to: blocker.appendingPathComponent("run.json"))
        }
        // the name is a folder: the rename fails
        let taken = folder.appendingPathComponent("taken")
        try FileManager.default.createDirectory(
            at: taken.appendingPathComponent("inside"), withIntermediateDirectories: true)
        expectFailure(.unwritable) { try ResultsFile.writeAtomically(Data("{}".utf8), to: taken) }
    }

    @Test("a failed verification in the files the gate agrees on is a failed verification, exit 3")
    func test_agreement_failedVerificationExits3() throws {
        var file = ComparisonTests.file(scale: 1)
        file.rows[0].status = .failed
        file.rows[0].failure = "planted: 3 elements, expected 4"
        let error = expectFailure(.verificationFailed) {
            try MallocAgreement.check(counts: [:], rows: file.rows, benchmarks: [], source: "planted.json")
        }
        #expect(error?.description.contains("planted: 3 elements, expected 4") == true)
        #expect(ExitStatus(.verificationFailed) == .verificationFailed)
        for kind in ResultsError.Kind.allCases where kind != .verificationFailed {
            #expect(ExitStatus(kind) == .failure, "\(kind)")
        }
    }

    @Test("a message wrapped in context keeps its kind")
    func test_kindOf_keepsAWrappedKind() {
        #expect(ResultsError.kind(of: ResultsError(.incompatible, "x"), otherwise: .malformed) == .incompatible)
        #expect(ResultsError.kind(of: CocoaError(.fileNoSuchFile), otherwise: .malformed) == .malformed)
    }
}
