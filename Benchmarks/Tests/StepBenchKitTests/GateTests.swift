import ArgumentParser
import Foundation
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Testing

@testable import StepBenchCLI
@testable import StepBenchKit
@testable import StepBenchScenarios

/// `stepbench gate`: what it measures of a build (older builds included), how it runs that
/// build's tool, and which package-benchmark thresholds it keeps.
@Suite("stepbench gate")
struct GateTests {
    let catalog = Catalog.current

    @Test func test_plan_isTheCatalogs() throws {
        let plan = try Gate.Plan(catalog: catalog, known: Set(catalog.scenarios.map(\.name)))
        #expect(plan.profileDesigns == catalog.designs)
        #expect(plan.runDesigns == catalog.gateDesigns)
        #expect(plan.profileScenarios == catalog.profiledScenarios)
        #expect(plan.runs.map(\.elements) == catalog.gateRuns.map(\.elements))
        #expect(plan.runs.map(\.scenarios) == catalog.gateRuns.map(\.scenarios))
        // each run measures only the designs whose count is exact in one of its scenarios: a row the
        // gate does not gate is not run (a peer crashed in async-step ×2, a race in its own
        // library, and the gate could not decide)
        for run in plan.runs {
            let exact = Set(catalog.scenarios.filter { run.scenarios.contains($0.name) }.flatMap(\.exactAllocations))
            #expect(!run.designs.isEmpty && run.designs.allSatisfy(exact.contains), "\(run)")
            #expect(run.designs == plan.runDesigns.filter(exact.contains))
        }
        let handOff = try #require(plan.runs.first { $0.scenarios.contains("async-step") })
        let asyncStep = try #require(catalog.scenarios.first { $0.name == "async-step" })
        #expect(handOff.designs == catalog.gateDesigns.filter(asyncStep.exactAllocations.contains))
        #expect(handOff.designs.count < catalog.gateDesigns.count)
    }

    @Test("an older build is asked only for the scenarios it knows; a run left with none is dropped")
    func test_plan_olderBuild() throws {
        let last = try #require(catalog.gateRuns.last)
        let known = Set(catalog.scenarios.map(\.name)).subtracting(last.scenarios + ["direct-sync"])
        let plan = try Gate.Plan(catalog: catalog, known: known)
        #expect(!plan.profileScenarios.contains("direct-sync") && !plan.profileScenarios.isEmpty)
        #expect(plan.runs.map(\.elements) == catalog.gateRuns.dropLast().map(\.elements))
        #expect(plan.runs.allSatisfy { !$0.scenarios.contains("direct-sync") })
    }

    @Test("--design keeps the catalog's order; designs without exact counts are profiled, not run")
    func test_plan_onlyDesigns() throws {
        let notGated = try #require(catalog.designs.first { !catalog.gateDesigns.contains($0) })
        let gated = try #require(catalog.gateDesigns.last)
        let known = Set(catalog.scenarios.map(\.name))
        let plan = try Gate.Plan(catalog: catalog, known: known, only: [notGated, gated])
        #expect(plan.profileDesigns == catalog.designs.filter { [notGated, gated].contains($0) })
        #expect(plan.runDesigns == [gated] && plan.runs.allSatisfy { $0.designs == [gated] })
        let profiledOnly = try Gate.Plan(catalog: catalog, known: known, only: [notGated])
        #expect(profiledOnly.runDesigns.isEmpty && profiledOnly.runs.isEmpty)
        expectFailure(.unknownName) { try Gate.Plan(catalog: catalog, known: known, only: ["turbo"]) }
    }

    /// A stand-in for a build's stepbench: records each call (its folder and arguments) and
    /// writes the file named after --output; `run` exits `runStatus`.
    func fakeTool(in folder: URL, runStatus: Int = 0) throws -> URL {
        let list = folder.appendingPathComponent("catalog.json")
        try JSONEncoder().encode(catalog).write(to: list)
        let tool = folder.appendingPathComponent("stepbench")
        let script = """
            #!/bin/sh
            echo "$(pwd) $*" >> "\(folder.path)/calls.txt"
            case "$1" in
                list) cat "\(list.path)"; exit 0 ;;
                run) [ \(runStatus) -eq 0 ] || { echo "verification failed: 9 of 10 elements" >&2; exit \(runStatus); } ;;
            esac
            while [ $# -gt 0 ]; do
                if [ "$1" = --output ]; then echo '{}' > "$2"; fi
                shift
            done
            """
        try writeExecutable(script, to: tool)
        return tool
    }

    @Test("measure runs the build's own tool in its own tree: list, profile, each run, merge")
    func test_measure_runsTheBuildsTool() throws {
        let folder = temporaryFolder(), tree = temporaryFolder()
        defer { for f in [folder, tree] { try? FileManager.default.removeItem(at: f) } }
        let build = Gate.Build(tool: try fakeTool(in: folder), tree: tree, name: "base")
        let plan = try Gate.Plan(catalog: catalog, known: try build.knownScenarios())
        let output = folder.appendingPathComponent("base.json")
        let runs = try Gate.measure(build, plan: plan, output: output, pieces: folder) { _ in }
        let calls = try String(contentsOf: folder.appendingPathComponent("calls.txt"), encoding: .utf8)
            .split(separator: "\n")
        let inTree = tree.resolvingSymlinksInPath().path
        #expect(calls.allSatisfy { $0.hasPrefix(inTree + " ") || $0.hasPrefix(tree.path + " ") })
        let verbs = calls.map { $0.split(separator: " ")[1] }
        #expect(verbs == ["list", "profile"] + Array(repeating: "run", count: plan.runs.count) + ["merge"])
        let first = try #require(plan.runs.first)
        #expect(
            calls.contains {
                $0.hasSuffix(
                    "run --scenario \(first.scenarios.joined(separator: ",")) --design \(first.designs.joined(separator: ",")) --threads 1,2 --repetitions 3 --elements \(first.elements) --output \(folder.path)/base-\(first.elements).json"
                )
            })
        #expect(runs.map(\.lastPathComponent) == plan.runs.map { "base-\($0.elements).json" })
        #expect(calls.last?.hasSuffix("--output \(output.path)") == true)
        #expect(FileManager.default.fileExists(atPath: output.path))
    }

    @Test("a failed verification is a regression, with what the build wrote; another failure is not")
    func test_measure_verificationFailure() throws {
        for (status, regression) in [(3, true), (1, false)] {
            let folder = temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let build = Gate.Build(tool: try fakeTool(in: folder, runStatus: status), tree: folder, name: "current")
            let plan = try Gate.Plan(catalog: catalog, known: try build.knownScenarios())
            do {
                try Gate.measure(build, plan: plan, output: folder.appendingPathComponent("x.json"), pieces: folder) {
                    _ in
                }
                Issue.record("exit \(status) measured")
            } catch let failure as ResultsError {
                #expect(failure.kind == (regression ? .verificationFailed : .toolFailed))
                #expect(failure.description.contains("verification failed: 9 of 10 elements"))
                #expect(failure.description.contains("stepbench run failed (current, exit \(status))"))
            }
        }
    }

    @Test func test_measure_notACatalog() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tool = folder.appendingPathComponent("stepbench")
        try writeExecutable("#!/bin/sh\necho nonsense\n", to: tool)
        let failure = expectFailure(.toolFailed) {
            try Gate.Build(tool: tool, tree: folder, name: "base").knownScenarios()
        }
        #expect(failure?.description.contains("is not a catalog") == true)
    }

    @Test("only exact malloc counts stay gated: other metrics and other benchmarks' files go")
    func test_thresholds_policy() throws {
        var c = catalog
        c.benchmarks = [("sync-step_atomic", true), ("sync-step_actor", false), ("floor-pingpong", true)].map {
            Catalog.Benchmark(
                name: $0.0, scenario: "", design: "", threads: 1, elements: 1, exactAllocations: $0.1,
                allocationTolerance: nil)
        }
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["sync-step_atomic", "sync-step_actor", "floor-pingpong", "renamed-away"] {
            try Data(#"{"mallocCountTotal": 20, "wallClock": 5}"#.utf8).write(
                to: folder.appendingPathComponent("SteppingBenchmarks.\(name).p90.json"))
        }
        try Data("other".utf8).write(to: folder.appendingPathComponent("README"))
        let (trimmed, deleted) = try ThresholdPolicy.apply(to: folder, catalog: c)
        #expect(trimmed == ["floor-pingpong", "sync-step_atomic"])
        #expect(deleted == ["renamed-away", "sync-step_actor"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
                "README", "SteppingBenchmarks.floor-pingpong.p90.json", "SteppingBenchmarks.sync-step_atomic.p90.json",
            ])
        let kept = try String(
            contentsOf: folder.appendingPathComponent("SteppingBenchmarks.sync-step_atomic.p90.json"), encoding: .utf8)
        #expect(kept == "{\n  \"mallocCountTotal\": 20\n}\n")
        let again = try ThresholdPolicy.apply(to: folder, catalog: c)
        #expect(again.trimmed.isEmpty && again.deleted.isEmpty)
        #expect(ThresholdPolicy.filter(c) == "^(floor-pingpong|sync-step_atomic)$")
    }

    @Test("the thresholds check: a regression, an improvement only (not a failure), a run that did not complete")
    func test_thresholds_checkOutcome() {
        typealias O = ThresholdPolicy.CheckOutcome
        #expect(O(output: "… benchmarkThresholdRegression …", status: 2) == .regression)
        #expect(O(output: "all fine", status: 0) == .passed)
        #expect(O(output: "benchmarkThresholdImprovement", status: 4) == .improvementOnly)
        #expect(O(output: "Fatal error", status: 1) == .failed(status: 1))
        #expect(
            ThresholdPolicy.shown("[3/9] Compiling X\nBuilding for production\n\n  table row\nBuild complete!\nlast")
                == "  table row\nlast")
    }

    func message(_ arguments: [String]) -> String? {
        do {
            let command = try StepBench.parseAsRoot(arguments)
            _ = command
            return nil
        } catch {
            return StepBench.message(for: error)
        }
    }

    @Test("run --protocol: the tool's named runs, and what each fixes cannot be given beside it")
    func test_protocol() throws {
        #expect(
            message(["run", "--protocol", "timing", "--scenario", "sync-step"])?.contains("sets --scenario") == true)
        #expect(message(["run", "--protocol", "timing", "--elements", "5"])?.contains("sets --elements") == true)
        #expect(message(["run", "--protocol", "abtest", "--threads", "4"])?.contains("sets --threads") == true)
        #expect(message(["run", "--protocol", "abtest", "--preset", "full"])?.contains("sets --preset") == true)
        let notGated = try #require(SteppingDesign.described.first { Gate.designs(among: [$0]).isEmpty })
        #expect(
            message(["run", "--protocol", "timing", "--design", notGated.rawValue])?.contains("none of the designs")
                == true)
        // Designs are described once per process, and other tests describe more (the relayed
        // ones) at any time: describe them first, so the protocol and the catalog it is held to
        // are read from the same designs (this test failed when ScenarioTests described them
        // between the suite's catalog and the run's configuration).
        _ = SteppingDesign.relayedDesigns
        let catalog = Catalog.current
        let run = try #require(
            try StepBench.parseAsRoot(["run", "--protocol", "timing", "--allow-debug"]) as? StepBench.Run)
        let timing = try run.makeConfiguration()
        #expect(timing.scenarios.map(\.rawValue) == catalog.timingScenarios)
        #expect(timing.designs.map(\.rawValue) == catalog.gateDesigns)
        #expect(timing.elements == catalog.timingElements)
        let ab = try #require(
            try StepBench.parseAsRoot(["run", "--protocol", "abtest", "--design", "atomic", "--allow-debug"])
                as? StepBench.Run)
        let abtest = try ab.makeConfiguration()
        #expect(abtest.scenarios.map(\.rawValue) == catalog.abtestScenarios)
        #expect(abtest.designs == [.atomic] && abtest.threads == [2] && abtest.preset == .brief)
        // Spelt out for an older build, which has no --protocol: the same runs.
        for (p, designs) in [(MeasuringProtocol.timing, nil), (.abtest, nil), (.abtest, [SteppingDesign.atomic])] {
            let named = try #require(
                try StepBench.parseAsRoot(
                    ["run", "--protocol", p.rawValue, "--allow-debug"]
                        + (designs.map { ["--design", $0.map(\.rawValue).joined(separator: ",")] } ?? []))
                    as? StepBench.Run)
            let spelt = try #require(
                try StepBench.parseAsRoot(["run", "--allow-debug"] + p.runArguments(designs: designs)) as? StepBench.Run
            )
            let (x, y) = (try named.makeConfiguration(), try spelt.makeConfiguration())
            #expect(x.scenarios == y.scenarios && x.designs == y.designs && x.threads == y.threads)
            #expect(x.elements == y.elements && x.preset == y.preset, "\(p)")
        }
    }
}

/// `stepbench ab`'s session: pairs alternate their order, it looks after each batch once it has 3
/// pairs, and stops at a decision, at the looks' end or before a look the budget cannot pay for.
@Suite("interleaved A/B session")
struct InterleavedSessionTests {
    func session(
        batch: Int, looks: Int, budget: Double = 1e9, verdicts: [InterleavedSession.Status],
        secondsPerProcess: Double = 0
    ) throws -> (calls: [String], looked: Int, outcome: (status: InterleavedSession.Status, pairs: Int, looks: Int)) {
        var calls: [String] = [], looked = 0, clock = 0.0
        let outcome = try InterleavedSession(batch: batch, looks: looks, budget: budget).run(
            process: { side, n in
                calls.append("\(side.rawValue)\(n)")
                clock += secondsPerProcess
                return URL(fileURLWithPath: "/\(side.rawValue)\(n)")
            },
            look: { a, b in
                #expect(a.map(\.lastPathComponent) == (1...a.count).map { "A\($0)" })
                #expect(b.map(\.lastPathComponent) == (1...b.count).map { "B\($0)" })
                looked += 1
                return (
                    Comparison(
                        baselineCommit: "a", currentCommit: "b", minEffect: 0.05, decisionLevel: 0.01,
                        noiseProfile: nil, rows: []), verdicts[min(looked, verdicts.count) - 1]
                )
            }, now: { clock }, log: { _ in })
        return (calls, looked, (outcome.status, outcome.pairs, outcome.looks))
    }

    @Test func test_pairsAlternateAndTheFirstLookWaitsForThreePairs() throws {
        let r = try session(batch: 2, looks: 3, verdicts: [.decided])
        #expect(r.calls == ["A1", "B1", "B2", "A2", "A3", "B3", "B4", "A4"])
        #expect(r.looked == 1 && r.outcome.status == .decided && r.outcome.pairs == 4 && r.outcome.looks == 2)
    }

    @Test func test_stopsAtARegressionOrWhenTheLooksRunOut() throws {
        let regression = try session(batch: 4, looks: 6, verdicts: [.inconclusive, .regression])
        #expect(regression.outcome.status == .regression && regression.outcome.pairs == 8)
        let spent = try session(batch: 4, looks: 3, verdicts: [.inconclusive])
        #expect(spent.outcome.status == .inconclusive && spent.outcome.pairs == 12 && spent.looked == 3)
    }

    @Test("a look the budget cannot pay for is not begun")
    func test_budget() throws {
        // Each look (4 pairs, 8 processes) takes 80 s: after two, a third would end at 240 s > 200 s.
        let r = try session(batch: 4, looks: 6, budget: 200, verdicts: [.inconclusive], secondsPerProcess: 10)
        #expect(r.outcome.status == .inconclusive && r.outcome.looks == 2 && r.outcome.pairs == 8)
    }
}
