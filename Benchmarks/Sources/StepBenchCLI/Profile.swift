import ArgumentParser
import Foundation
import StepBenchKit
import StepBenchScenarios
@_spi(Measurement) import Stepping

extension StepBench {
    struct Profile: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .designFault: "a target's child crashed or hung (--watchdog): the file holds every other target"
        ]
        static let configuration = CommandConfiguration(
            abstract: "Exact instructions per element under valgrind's callgrind, with the top functions per design.",
            discussion: ExitStatus.sentence(exitStatuses))

        @OptionGroup var selection: Selection

        @Option(help: "Elements of the smaller run (the larger has three times as many).")
        var elements: Int = 4_000

        @Option(
            help: "Comma-separated paths to count per event, or 'none' (default: every path). See `stepbench list`.",
            transform: CommaSeparated.paths)
        var path: [StepPath] = StepPath.allCases

        @Option(help: "Events of each path's smaller window (the larger has three times as many).")
        var events: Int = 200

        @OptionGroup var destination: Destination

        @Option(
            help:
                "Seconds one profiling child (a callgrind run) may take before it is stopped and its target marked hung; the profile goes on without it."
        )
        var watchdog: Double = Profiler.defaultWatchdog

        var scenarios: [ScenarioKind] { selection.scenario ?? Profiler.scenarios }

        func validate() throws {
            guard elements > 0 else { throw ValidationError("--elements must be a positive number, got \(elements)") }
            guard events > 0 else { throw ValidationError("--events must be a positive number, got \(events)") }
            guard watchdog > 0 else { throw ValidationError("--watchdog must be positive, e.g. 900") }
            try StepBench.validating {
                try Profiler.check(scenarios: scenarios)
                if destination.output != nil { try destination.checkWritable() }
            }
        }

        func run() throws {
            var profiler = Profiler(child: Child.process)
            profiler.elementsLow = elements
            profiler.elementsHigh = elements * 3
            profiler.eventsLow = events
            profiler.eventsHigh = events * 3
            profiler.progress = { printError("\($0)\n") }
            profiler.watchdog = watchdog
            let (rows, paths, faults) = try profiler.profile(
                scenarios: scenarios, paths: path, designs: selection.design)
            let machine = MachineFingerprint.current()
            let file = ResultsFile.profiled(rows, paths: paths, faults: faults, machine: machine, elements: elements)
            let (url, latest) = destination.urls(machineID: machine.machineID, prefix: "profile-")
            try file.write(to: url)
            if let latest { try file.write(to: latest) }
            print(
                "instructions per element (callgrind: the measured window, or * the whole process; per function: exclusive per element):"
            )
            let width = max(7, rows.map(\.design.name.count).max() ?? 0)
            for r in rows {
                let whole = r.collection == .wholeProcess ? " *" : ""
                print(
                    "  \(r.scenario.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(r.design.name.padding(toLength: width, withPad: " ", startingAt: 0)) \(String(format: "%10.1f", r.instructionsPerElement))\(whole)"
                )
                for f in r.topFunctions.prefix(6) {
                    print(String(format: "      %8.1f  ", f.instructionsPerElement ?? 0) + f.function)
                }
            }
            if !paths.isEmpty { print(PathTable.text(paths)) }
            if let splits = file.costSplits { print(CostSplitTable.text(splits)) }
            printError("profile written to \(url.path)\n")
            for fault in faults {
                printError("\(fault.status.rawValue.uppercased()): \(fault.target): \(fault.failure)\n")
            }
            if !faults.isEmpty {
                printError("stepbench profile: \(faults.count) target(s) crashed or hung (the others were profiled)\n")
                throw ExitStatus.designFault.code
            }
        }
    }
}
