import Foundation
@_spi(Measurement) import Stepping
import Testing

@testable import StepBenchKit
@testable import StepBenchScenarios

/// `stepbench history series`: a results folder read as a history, and what each series' numbers are.
/// (scripts/tests/test_history.py runs the command end to end through scripts/history.)
@Suite("stepbench history series: runs in order, series with their meaning")
struct HistorySeriesTests {
    /// A file older than the catalog, holding `floorScenario` as the floor of every scenario.
    static func legacy(floor floorScenario: ScenarioKind, staleStormThreads: Int) -> ResultsFile {
        var f = ResultsFileTests.sample()
        f.catalog = nil
        let reps = f.rows[1].repetitions
        f.rows = [
            .init(
                scenario: .staleStorm, design: "atomic", threads: staleStormThreads, elements: 10_000, status: .ok,
                failure: nil, repetitions: reps, summary: nil),
            .init(
                scenario: floorScenario, design: "floor", threads: 1, elements: 10_000, status: .ok, failure: nil,
                repetitions: reps.map {
                    var r = $0; r.elapsedNanoseconds /= 2; return r
                }, summary: nil),
        ]
        return f
    }

    @Test("a file older than the catalog is paired with the floor of its time, at the floor's thread count")
    func test_series_legacyFloors() throws {
        let old = Self.legacy(floor: .floorSync, staleStormThreads: 2)
        #expect(old.floor(of: .staleStorm) == .floorSync)
        let floorRow = try #require(old.floorRow(of: old.rows[0]))
        #expect(floorRow.scenario == .floorSync && floorRow.threads == 1)
        let paired = Comparison.timingSamples(old.rows[0], in: old).first { $0.metric == .nsPerElementVsFloor }
        #expect(paired?.samples.allSatisfy { abs($0 - 2) < 1e-9 } == true)
        // a newer file without a catalog that holds the scenario's own floor was made with it
        #expect(Self.legacy(floor: .floorStaleStorm, staleStormThreads: 2).floor(of: .staleStorm) == .floorStaleStorm)
        // what the file was written with (`stepbench list --of FILE`): today's catalog, its floors
        #expect(old.writtenWith.scenarios.first { $0.name == "stale-storm" }?.floor == "floor-sync")
        #expect(old.writtenWith.designs == Catalog.current.designs)
        // a file with a catalog: the catalog's floor
        var current = ResultsFileTests.sample()
        current.catalog = Catalog.current
        #expect(current.floor(of: .syncStep) == .floorSync)
    }

    @Test("a folder: runs in createdAt order when git does not know the commits, the rest left out with why")
    func test_series_folder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("series-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func write(_ file: ResultsFile, _ name: String) throws {
            try file.write(to: folder.appendingPathComponent(name))
        }
        var first = ResultsFileTests.sample()
        first.machine.gitCommit = "1111111111"
        first.createdAt = "2026-11-22T02:00:00Z"
        for i in first.rows.indices { first.rows[i].allocationsExact = true }
        func path(_ design: SteppingDesign, synchronising: Double, exact: Bool = true) -> ResultsFile.PathRow {
            ResultsFile.PathRow(
                path: .syncMore, design: .design(design), eventsLow: 100, eventsHigh: 200, instructionsPerEvent: 1_000,
                synchronisingPerEvent: synchronising, allocationsPerEvent: 0, topFunctions: [],
                synchronisingFunctions: [],
                exact: exact)
        }
        first.paths = [path(.atomic, synchronising: 3), path(.actorStream, synchronising: 9, exact: false)]
        var second = first
        second.paths = [path(.atomic, synchronising: 4), path(.actorStream, synchronising: 12, exact: false)]
        second.machine.gitCommit = "2222222222"
        second.createdAt = "2026-11-22T01:00:00Z"  // made first, named last
        second.rows[1].repetitions = second.rows[1].repetitions.map {
            var r = $0; r.allocations = 10_000; return r
        }
        try write(first, "b.json")
        try write(second, "c.json")
        try write(first, "latest.json")
        try write(first, "baseline.json")
        var debug = first
        debug.machine.buildConfiguration = "debug"
        debug.createdAt = "2026-11-22T03:00:00Z"
        try write(debug, "d.json")
        try ComparisonTests.quiet.write(to: folder.appendingPathComponent("noise.json"))
        // scripts/conformance's verdict lives beside the runs
        try Data(
            #"{"schema": "stepbench-conformance/2", "designs": [], "conforms": true, "rules": [], "measured": []}"#.utf8
        )
        .write(to: folder.appendingPathComponent("conformance.json"))

        let s = try SeriesFile.make(folder: folder.path, noise: .folderDefault)
        #expect(s.machineId == "test-cpu-2c")
        #expect(s.runs.map(\.file) == ["c.json", "b.json"] && s.runs.allSatisfy { $0.orderedBy == "createdAt" })
        #expect(
            s.skipped.map(\.file) == ["baseline.json", "conformance.json", "d.json", "noise.json", "latest.json"],
            "\(s.skipped)")
        #expect(s.skipped.last?.reason == "a copy of b.json")
        #expect(s.noiseProfile?.hasSuffix("noise.json") == true)
        let allocations = try #require(
            s.series.first { $0.design == "atomic" && $0.metric == .allocationsPerElement })
        #expect(allocations.exact && allocations.tolerance == .init(relative: nil, absolute: 0.01))
        #expect(allocations.points.map(\.value) == [1, 0] && allocations.points.map(\.run) == [0, 1])
        let paired = try #require(s.series.first { $0.design == "atomic" && $0.metric == .nsPerElementVsFloor })
        #expect(!paired.exact && paired.points.allSatisfy { abs($0.value - 2) < 1e-9 && $0.logs?.count == 5 })
        #expect(
            paired.points[0].measurement.map(\.name) == [
                "schema", "preset", "handoff", "elementsOverride", "aggregation", "elements",
            ])
        // a path's exact counts are series of their own, after the scenarios', each with the
        // gate's tolerance; a path whose counts follow the schedule is left out, as the gate leaves it
        let synchronising = try #require(
            s.series.first { $0.key == MeasureKey(path: .syncMore, .design(.atomic), .synchronisingPerEvent) })
        #expect(synchronising.exact && synchronising.tolerance == .init(relative: nil, absolute: 0.5))
        #expect(synchronising.points.map(\.value) == [4, 3])
        #expect(s.series.last?.key.target == .path(.syncMore) && s.series.last?.metric == .allocationsPerEvent)
        #expect(!s.series.contains { $0.key.target == .path(.syncMore) && $0.design == "actor-stream" })
        // written as results files write a row: the path's name in the scenario field
        let json = try JSONOutput.string(synchronising)
        #expect(
            json.contains(#""scenario" : "sync-more""#)
                && json.contains(#""metric" : "synchronising_instructions_per_event""#))
        #expect(try JSONDecoder().decode(HistorySeries.self, from: Data(json.utf8)) == synchronising)
        // timing series first, in the tool's order (sync-step's designs in the catalog's order)
        #expect(s.series.first?.metric == .nsPerElementVsFloor)
        #expect(s.defaultMinEffect == Comparison.defaultMinEffect)

        expectFailure(.wrongKind) {
            try SeriesFile.make(folder: folder.appendingPathComponent("b.json").path, noise: .none)
        }
        var other = first
        other.machine.cpuModel = "Other CPU"
        try write(other, "e.json")
        let mixed = expectFailure(.incompatible) { try SeriesFile.make(folder: folder.path, noise: .none) }
        #expect(mixed?.description.contains("several machine kinds") == true)
    }

    @Test("an exact series carries the gate's own tolerance for its row, as compare applies it")
    func test_series_tolerancesAreCompares() {
        let loose = SteppingDesign.allCases.first { $0.traits.instructionTolerance != nil }!
        let atomic = RowKey(scenario: .syncStep, design: .design(.default), threads: 1)
        let stream = RowKey(scenario: .syncStep, design: .design(loose), threads: 1)
        let race = RowKey(scenario: .cancelRace, design: .design(.default), threads: 2)
        func tolerance(_ row: RowKey, _ metric: Metric) -> HistorySeries.Tolerance {
            HistorySeries.tolerance(of: MeasureKey(row, metric))
        }
        #expect(tolerance(atomic, .instructionsPerElement).relative == 0.005)
        #expect(tolerance(stream, .instructionsPerElement).relative == loose.traits.instructionTolerance)
        #expect(
            tolerance(race, .allocationsPerElement).absolute
                == ScenarioKind.cancelRace.allocationTolerance(for: .design(.default)))
        #expect(tolerance(atomic, .allocationsPerElement).absolute == 0.01)
        // a path's counts: compare's rule for paths
        let path = { (metric: Metric) in
            HistorySeries.tolerance(of: MeasureKey(path: .syncMore, .design(loose), metric))
        }
        #expect(path(.instructionsPerEvent).relative == loose.traits.instructionTolerance)
        #expect(path(.synchronisingPerEvent).absolute == Comparison.countTolerance)
        #expect(path(.allocationsPerEvent).absolute == Comparison.countTolerance)
    }

    @Test(
        "a design this build does not know (another executable's) is read by name; a file naming an unknown scenario is left out, said why"
    )
    func test_series_unknownDesignIsReadUnknownScenarioLeftOut() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("series-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let known = ResultsFileTests.sample()
        try known.write(to: folder.appendingPathComponent("a.json"))
        let text = String(decoding: try JSONOutput.encode(known), as: UTF8.self)
        let outside = text.replacingOccurrences(of: "\"design\" : \"atomic\"", with: "\"design\" : \"semaphore\"")
        #expect(outside.contains("semaphore"))
        try Data(outside.utf8).write(to: folder.appendingPathComponent("b.json"))
        let retired = text.replacingOccurrences(of: "\"scenario\" : \"sync-step\"", with: "\"scenario\" : \"retired\"")
        #expect(retired.contains("retired"))
        try Data(retired.utf8).write(to: folder.appendingPathComponent("c.json"))
        let s = try SeriesFile.make(folder: folder.path, noise: .none)
        #expect(s.runs.map(\.file) == ["a.json", "b.json"])
        #expect(s.series.contains { $0.design.name == "semaphore" })
        #expect(s.skipped == [.init(file: "c.json", reason: "names a scenario or path this build does not know")])
    }
}
