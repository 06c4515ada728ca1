import Foundation
import Testing

@testable import StepBenchKit
@testable import StepBenchScenarios

@Suite("Results files: schema stepbench/1, round trip, atomic writes")
struct ResultsFileTests {
    static func sample() -> ResultsFile {
        let reps = (0..<5).map { i in
            RepetitionResult(
                elapsedNanoseconds: 1_000_000 + UInt64(i) * 1_000, elements: 10_000, allocations: 0,
                cpuNanoseconds: 990_000,
                latency: LatencySummary(
                    count: 10_000, p50: 100, p90: 150, p99: 300, p999: 900, p9999: 2_000, max: 5_000))
        }
        var file = ResultsFile(
            schema: ResultsFile.currentSchema, createdAt: "2026-11-22T00:00:00Z",
            machine: MachineFingerprint(
                cpuModel: "Test CPU", cores: 2, kernel: "Linux", swiftVersion: "6.3.1",
                gitCommit: "abc", gitDirty: false, buildConfiguration: "release", allocator: "jemalloc"),
            configuration: .init(
                preset: .quick, repetitions: 5, warmup: true, threads: [1], elementsOverride: nil, handoff: "spin-yield"
            ),
            rows: [
                .init(
                    scenario: .syncStep, design: "seed", threads: 1, elements: 10_000, status: .ok, failure: nil,
                    repetitions: reps.map {
                        var r = $0; r.elapsedNanoseconds *= 4; return r
                    }, summary: nil),
                .init(
                    scenario: .syncStep, design: "atomic", threads: 1, elements: 10_000, status: .ok, failure: nil,
                    repetitions: reps, summary: nil),
                .init(
                    scenario: .floorSync, design: "floor", threads: 1, elements: 10_000, status: .ok, failure: nil,
                    repetitions: reps.map {
                        var r = $0; r.elapsedNanoseconds /= 2; return r
                    }, summary: nil),
                .init(
                    scenario: .asyncStep, design: "locked", threads: 2, elements: 10_000, status: .failed,
                    failure: "async-step locked: 3 inputs out of order", repetitions: [], summary: nil),
            ],
            peakRSSBytes: 1 << 20)
        for i in file.rows.indices where file.rows[i].status == .ok {
            file.rows[i].summary = ResultsFile.Summary(file.rows[i].repetitions)
        }
        file.computeRatios()
        return file
    }

    @Test func test_results_roundTrip() throws {
        let file = Self.sample()
        let url = temporaryFolder().appendingPathComponent("r.json")
        try file.write(to: url)
        #expect(try ResultsFile.read(url) == file)
        // raw repetitions are kept
        #expect(try ResultsFile.read(url).rows[1].repetitions.count == 5)
    }

    @Test func test_results_anOlderEmbeddedCatalogStillDecodes() throws {
        // The committed baseline.json carries the catalog of the day it was written; fields the
        // catalog gained since must not make it unreadable (scripts/regress failed on exactly that).
        var file = Self.sample()
        file.catalog = .current
        var json = try JSONSerialization.jsonObject(with: Data(JSONOutput.string(file).utf8)) as! [String: Any]
        var catalog = json["catalog"] as! [String: Any]
        for key in ["asynchronousDesigns", "timingScenarios", "timingElements", "paths"] {
            catalog.removeValue(forKey: key)
        }
        json["catalog"] = catalog
        let old = try JSONSerialization.data(withJSONObject: json)
        let read = try JSONDecoder().decode(ResultsFile.self, from: old)
        #expect(read.catalog?.designs == Catalog.current.designs)
        #expect(read.catalog?.asynchronousDesigns == [] && read.catalog?.timingScenarios == [])
        #expect(read.catalog?.paths == [])
    }

    @Test func test_results_presetIsWrittenAsPresetAndReadUnderItsOldNameToo() throws {
        let text = try JSONOutput.string(Self.sample())
        #expect(text.contains(#""preset" : "quick""#) && !text.contains(#""profile""#))
        let old = text.replacingOccurrences(of: #""preset" :"#, with: #""profile" :"#)
        #expect(try JSONDecoder().decode(ResultsFile.self, from: Data(old.utf8)) == Self.sample())
    }

    @Test func test_results_ratiosToSeedAndFloor() throws {
        let file = Self.sample()
        let atomic = try #require(file.rows[1].summary)
        #expect(abs(atomic.ratioToSeed! - 0.25) < 0.01)
        #expect(abs(atomic.ratioToFloor! - 2.0) < 0.01)
        #expect(file.rows[3].summary == nil)
    }

    @Test func test_results_wrongSchemaIsAClearError() throws {
        let url = temporaryFolder().appendingPathComponent("old.json")
        try Data(#"{"schema": "stepbench/0", "rows": []}"#.utf8).write(to: url)
        #expect { try ResultsFile.read(url) } throws: { error in
            "\(error)".contains("old.json") && "\(error)".contains("stepbench/0") && "\(error)".contains("stepbench/1")
        }
    }

    @Test func test_results_malformedAndMissingFilesAreClearErrors() throws {
        let folder = temporaryFolder()
        let garbage = folder.appendingPathComponent("garbage.json")
        try Data("not json".utf8).write(to: garbage)
        #expect { try ResultsFile.read(garbage) } throws: {
            "\($0)".contains("garbage.json") && "\($0)".contains("not a JSON")
        }
        let truncated = folder.appendingPathComponent("truncated.json")
        try Data(#"{"schema": "stepbench/1", "rows": 3}"#.utf8).write(to: truncated)
        #expect { try ResultsFile.read(truncated) } throws: {
            "\($0)".contains("truncated.json") && "\($0)".contains("malformed")
        }
        // the problem in the file's own terms, not a decoder's dump
        let bare = folder.appendingPathComponent("bare.json")
        try Data(#"{"schema": "stepbench/1"}"#.utf8).write(to: bare)
        #expect { try ResultsFile.read(bare) } throws: {
            "\($0)".contains("bare.json: malformed stepbench/1 file: the top level has no '")
        }
        // a real file, broken in one place at a time
        func broken(_ name: String, _ change: (inout [String: Any]) -> Void) throws -> URL {
            var top = try #require(
                try JSONSerialization.jsonObject(with: JSONOutput.encode(Self.sample())) as? [String: Any])
            change(&top)
            let url = folder.appendingPathComponent(name)
            try JSONSerialization.data(withJSONObject: top).write(to: url)
            return url
        }
        func rows(_ change: @escaping (inout [String: Any]) -> Void) -> (inout [String: Any]) -> Void {
            { top in
                var rows = top["rows"] as! [[String: Any]]
                change(&rows[0])
                top["rows"] = rows
            }
        }
        let expected = [
            ("nodesign.json", rows { $0["design"] = nil }, "rows[0] has no 'design'"),
            ("rowsnumber.json", { $0["rows"] = 3 }, "rows is not a list"),
            ("threadstext.json", rows { $0["threads"] = "one" }, "rows[0].threads is not a number"),
            ("nosummary.json", rows { $0["summary"] = nil }, "rows[0] is ok but has no summary"),
        ]
        for (name, change, problem) in expected {
            let url = try broken(name, change)
            #expect { try ResultsFile.read(url) } throws: {
                "\($0)".contains("\(url.relativePath): malformed stepbench/2 file: \(problem)")
            }
        }
        let numbered = try broken("schema2.json") { $0["schema"] = 2 }
        #expect { try ResultsFile.read(numbered) } throws: { "\($0)".contains("schema2.json: schema is '2', expected") }
        let list = folder.appendingPathComponent("list.json")
        try Data("[1, 2]".utf8).write(to: list)
        #expect { try ResultsFile.read(list) } throws: {
            "\($0)".contains("list.json: not a results file (the top level is not an object)")
        }
        #expect { try ResultsFile.read(folder.appendingPathComponent("missing.json")) } throws: {
            "\($0)".contains("missing.json")
        }
    }

    @Test func test_results_writeIsAtomicAndKeepsThePreviousFile() throws {
        let folder = temporaryFolder()
        let url = folder.appendingPathComponent("latest.json")
        let first = Self.sample()
        try first.write(to: url)
        var second = first
        second.createdAt = "later"
        try second.write(to: url)
        #expect(try ResultsFile.read(url).createdAt == "later")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
        // an unwritable destination fails and leaves the existing file as it was
        let blocked = folder.appendingPathComponent("blocked")
        try FileManager.default.createDirectory(
            at: blocked.appendingPathComponent("x.json"), withIntermediateDirectories: true)
        #expect(throws: (any Error).self) { try first.write(to: blocked.appendingPathComponent("x.json")) }
        #expect(try ResultsFile.read(url).createdAt == "later")
    }
}
