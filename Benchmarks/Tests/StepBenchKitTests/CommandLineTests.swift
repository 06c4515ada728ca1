import ArgumentParser
import Foundation
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Testing

@testable import StepBenchCLI
@testable import StepBenchKit
@testable import StepBenchScenarios

/// Every command-line error path fails at parse time, before any measuring, with a message
/// that names the problem and lists the valid choices.
@Suite("stepbench command line")
struct CommandLineTests {
    func message(_ arguments: [String]) -> String? {
        do {
            _ = try StepBench.parseAsRoot(arguments)
            return nil
        } catch {
            return StepBench.message(for: error)
        }
    }

    @Test func test_cli_unknownDesignListsValidOnes() {
        let m = message(["run", "--allow-debug", "--design", "atomic,turbo"])
        #expect(m?.contains("unknown design 'turbo'") == true, "\(m ?? "accepted")")
        #expect(m?.contains("seed, locked, mutex, atomic, actor") == true)
    }

    @Test("stepbench list prints every name whole: each goes back through --design, --scenario or --path")
    func test_cli_listedNamesAreAccepted() {
        // Every outside design this test process describes (the relay's test designs, which
        // other tests describe when they first touch them), described before the listing.
        let designs = (SteppingDesign.allCases + SteppingDesign.relayedDesigns).count
        let text = StepBench.List.text
        var section = ""
        var checked = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") {
                section = String(line.prefix { $0 != " " })
                continue
            }
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { continue }  // a name line, not a summary
            let name = String(line.dropFirst(2).prefix { $0 != " " })
            let arguments: [String]? =
                switch section {
                case "designs:": ["run", "--allow-debug", "--design", name]
                case "scenarios": ["run", "--allow-debug", "--scenario", name]
                case "paths": ["profile", "--path", name]
                default: nil
                }
            guard let arguments else { continue }
            #expect(
                message(arguments) == nil,
                "\(section) '\(name)' from stepbench list is rejected: \(message(arguments) ?? "")")
            checked += 1
        }
        #expect(checked == designs + ScenarioKind.allCases.count + StepPath.allCases.count)
    }

    @Test func test_cli_unknownScenarioListsValidOnes() {
        let m = message(["run", "--allow-debug", "--scenario", "warp"])
        #expect(m?.contains("unknown scenario 'warp'") == true, "\(m ?? "accepted")")
        #expect(m?.contains("sync-step") == true && m?.contains("floor-pingpong") == true)
    }

    @Test(arguments: [
        ["--elements", "0"], ["--elements", "-5"], ["--repetitions", "0"], ["--threads", "0"],
        ["--threads", "1,x"], ["--threads", ""], ["--preset", "huge"], ["--design", ","],
        ["--repetition-budget", "-1"], ["--repetition-budget", "nan"], ["--repetition-budget", "inf"],
    ])
    func test_cli_badCountsAndNamesAreRejected(arguments: [String]) {
        let m = message(["run", "--allow-debug"] + arguments)
        #expect(m != nil, "\(arguments) was accepted")
    }

    @Test("--min-effect is one option, checked once: every command that takes it refuses the same values the same way")
    func test_cli_minEffectIsCheckedAlikeEverywhere() {
        let commands: [[String]] = [
            ["compare", "a.json", "b.json"], ["compare", "--paired", "a", "b", "c", "d", "e", "f"],
            ["history", "series", "."], ["history", "."],
            // the old names, which run the new commands
            ["paired", "a", "b", "c", "d", "e", "f"], ["series", "."],
        ]
        for command in commands {
            for bad in ["0", "-0.1", "10", "nan"] {
                let m = message(command + ["--min-effect=\(bad)"])  // = : "-0.1" is a value, not an option
                #expect(
                    m?.contains("--min-effect must be a positive fraction such as 0.05") == true,
                    "\(command[0]) --min-effect \(bad): \(m ?? "accepted")")
            }
            #expect(message(command + ["--min-effect", "0.1"]) == nil, "\(command[0]) refuses --min-effect 0.1")
        }
    }

    @Test("compare takes two files, or with --paired three pairs and none of the two-file options")
    func test_cli_compareChecksItsFilesByMode() {
        #expect(message(["compare", "a.json"])?.contains("give two files, BASELINE CURRENT") == true)
        #expect(message(["compare", "a", "b", "c"])?.contains("give two files, BASELINE CURRENT") == true)
        #expect(message(["compare", "a", "b", "--looks", "2"])?.contains("--looks is for --paired") == true)
        #expect(message(["compare", "--paired", "a", "b"])?.contains("at least 3 pairs; got 2 file(s)") == true)
        #expect(
            message(["compare", "--paired", "a", "b", "c", "d", "e", "f", "--looks", "0"])?.contains(
                "--looks must be at least 1") == true)
        let m = message(["compare", "--paired", "a", "b", "c", "d", "e", "f", "--exact-only", "--no-noise"])
        #expect(m?.contains("--exact-only, --no-noise not with it") == true, "\(m ?? "accepted")")
        #expect(message(["compare", "--paired", "a", "b", "c", "d", "e", "f", "--looks", "3"]) == nil)
    }

    @Test("--noise and --no-noise are one option group: each command that takes them refuses both")
    func test_cli_noiseAndNoNoiseAreRefusedTogether() {
        for command in [["compare", "a", "b"], ["history", "series", "results"], ["series", "results"]] {
            let m = message(command + ["--noise", "n.json", "--no-noise"])
            #expect(m?.contains("give --noise or --no-noise, not both") == true, "\(command): \(m ?? "accepted")")
            #expect(message(command + ["--no-noise"]) == nil, "\(command)")
            #expect(message(command + ["--noise", "n.json"]) == nil, "\(command)")
        }
    }

    @Test func test_cli_unwritableOutputIsRejectedBeforeMeasuring() throws {
        let m = message(["run", "--allow-debug", "--output", "/proc/stepbench/results.json"])
        #expect(m?.contains("--output") == true, "\(m ?? "accepted")")
        let folder = temporaryFolder("stepbench-cli")
        let m2 = message(["run", "--allow-debug", "--output", folder.path])
        #expect(m2?.contains("is a folder") == true, "\(m2 ?? "accepted")")
    }

    @Test func test_cli_debugBuildNeedsAllowDebug() {
        guard MachineFingerprint.buildConfigurationOfThisBinary == "debug" else { return }
        let m = message(["run", "--scenario", "sync-step"])
        #expect(m?.contains("debug build") == true, "\(m ?? "accepted")")
    }

    @Test("the kit names a bad setting, the command line its flag")
    func test_cli_kitErrorsAreNamedByTheirFlag() throws {
        var configuration = RunConfiguration()
        configuration.allowDebug = true
        configuration.elements = 0
        #expect(throws: ConfigurationError(.elements, "must be a positive number, got 0")) {
            try configuration.validate()
        }
        #expect(
            message(["run", "--allow-debug", "--elements", "0"])?.contains("--elements: must be a positive number")
                == true)
        let help = StepBench.Run.helpMessage() + StepBench.Profile.helpMessage()
        for setting in ConfigurationError.Setting.allCases {
            #expect(
                help.contains(StepBench.flag(for: setting) + " "),
                "\(setting) has no flag \(StepBench.flag(for: setting))")
        }
    }

    @Test func test_cli_validInputParses() {
        #expect(
            message([
                "run", "--allow-debug", "--design", "locked,atomic", "--scenario", "sync-step",
                "--threads", "1,2", "--elements", "100", "--repetitions", "2", "--preset", "full",
                "--output", temporaryFolder("stepbench-cli").appendingPathComponent("ok.json").path,
            ]) == nil)
        #expect(message(["list"]) == nil)
    }
}

@Suite("the catalog's gate runs")
struct GateRunTests {
    @Test("every exact benchmark of a gate design or a floor is in one run, at its elements; most elements first")
    func test_catalog_gateRunsCoverTheExactBenchmarks() {
        let catalog = Catalog.current
        let floors = Set(catalog.scenarios.filter(\.isFloor).map(\.name))
        let wanted = catalog.benchmarks.filter {
            $0.exactAllocations && (catalog.gateDesigns.contains($0.design) || floors.contains($0.scenario))
        }
        #expect(!wanted.isEmpty)
        for b in wanted {
            #expect(catalog.gateRuns.filter { $0.scenarios.contains(b.scenario) }.map(\.elements) == [b.elements])
        }
        let listed = catalog.gateRuns.flatMap(\.scenarios)
        #expect(Set(listed) == Set(wanted.map(\.scenario)) && listed.count == Set(listed).count)
        #expect(catalog.gateRuns.map(\.elements) == catalog.gateRuns.map(\.elements).sorted(by: >))
    }
}
