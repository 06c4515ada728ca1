import ArgumentParser
import Foundation
import StepBenchKit
import Stepping
import StepBenchScenarios

/// `stepbench`: measures the stepping designs. Tables go to stdout; progress and errors to stderr.
public struct StepBench: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "stepbench",
        abstract: "Measure the stepping-subscriber designs: throughput, latency, allocations.",
        subcommands: [Run.self, List.self, Compare.self, Noise.self, Merge.self, ProfileCommand.self, Export.self])

    public init() {}

    /// Runs the tool with the exit codes the README promises: usage errors exit 1 (not
    /// ArgumentParser's 64), `compare` exits 2 on a regression, `run` 3 on a failed verification.
    public static func mainWithExitCodes() -> Never {
        do {
            var command = try parseAsRoot()
            try command.run()
            Foundation.exit(0)
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(1)
            }
            exit(withError: error)
        }
    }
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run scenarios × designs; write a results file; print a summary table.")

    @Option(help: "Comma-separated designs (default: all). See `stepbench list`.")
    var design: String = SteppingDesign.allCases.map(\.rawValue).joined(separator: ",")

    @Option(help: "Comma-separated scenarios (default: all, floors included).")
    var scenario: String = ScenarioKind.allCases.map(\.rawValue).joined(separator: ",")

    @Option(help: "Comma-separated thread counts for scenarios that take them.")
    var threads: String = "1,2,4"

    @Option(help: "Elements per repetition (rounds for cancel-race); default from the profile.")
    var elements: Int?

    @Option(help: "Repetitions per combination; default from the profile (quick 5, full 11).")
    var repetitions: Int?

    @Option(help: "quick or full.")
    var profile: String = Profile.quick.rawValue

    @Option(help: "Results file (default: results/<machine-id>/<time>.json, plus latest.json).")
    var output: String?

    @Option(help: "Folder for default results files.")
    var resultsDirectory: String = "results"

    @Flag(help: "Measure a debug build anyway (the results say debug).")
    var allowDebug = false

    @Flag(help: "Skip the warm-up pass.")
    var noWarmup = false

    @Option(help: "Seed of the shuffled order of each round (default: a fresh one; the results file records it).")
    var orderSeed: UInt64?

    @Option(help: "both (default): timing in a child process with jemalloc's thread caches on, as users run it, then exact allocation counts in a shorter pass with them off; timing or allocations: that pass alone, in this process.")
    var pass: String = RunPasses.Pass.both.rawValue

    @Flag(help: "Process isolation: each round of the timing pass in a fresh process, merged as `stepbench merge` does. Use it before publishing a timing claim (a process's heap and code layout move its numbers).")
    var fork = false

    func makeConfiguration() throws -> RunConfiguration {
        var c = RunConfiguration()
        c.designs = try RunConfiguration.parseList(design, of: SteppingDesign.self, what: "design")
        c.scenarios = try RunConfiguration.parseList(scenario, of: ScenarioKind.self, what: "scenario")
        c.threads = try RunConfiguration.parseThreads(threads)
        guard let p = Profile(rawValue: profile) else {
            throw ConfigurationError("unknown profile '\(profile)'; valid profiles: \(Profile.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        c.profile = p
        c.elements = elements
        c.repetitions = repetitions
        c.allowDebug = allowDebug
        c.warmup = !noWarmup
        c.orderSeed = orderSeed
        guard RunPasses.Pass(rawValue: pass) != nil else {
            throw ConfigurationError("unknown pass '\(pass)'; valid passes: \(RunPasses.Pass.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        try c.validate()
        return c
    }

    func outputURLs(machineID: String) -> (main: URL, latest: URL?) {
        if let output { return (URL(fileURLWithPath: output), nil) }
        let folder = URL(fileURLWithPath: resultsDirectory).appendingPathComponent(machineID)
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        return (folder.appendingPathComponent("\(stamp).json"), folder.appendingPathComponent("latest.json"))
    }

    func validate() throws {
        do {
            _ = try makeConfiguration()
            if let output { try RunConfiguration.checkWritable(URL(fileURLWithPath: output)) }
            else { try RunConfiguration.checkWritable(URL(fileURLWithPath: resultsDirectory).appendingPathComponent("x/probe.json")) }
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }

    /// This run's selection, as arguments for a child `stepbench run`.
    func childArguments(_ c: RunConfiguration, seed: UInt64, repetitions: Int) -> [String] {
        var a = ["--design", design, "--scenario", scenario, "--threads", threads, "--profile", profile,
                 "--repetitions", String(repetitions), "--order-seed", String(seed), "--pass", RunPasses.Pass.timing.rawValue]
        if let elements { a += ["--elements", String(elements)] }
        if allowDebug { a.append("--allow-debug") }
        if noWarmup { a.append("--no-warmup") }
        return a
    }

    func run() throws {
        var configuration = try makeConfiguration()
        let machine = MachineFingerprint.current()
        let (url, latest) = outputURLs(machineID: machine.machineID)
        try RunConfiguration.checkWritable(url)
        var file: ResultsFile
        switch RunPasses.Pass(rawValue: pass)! {
        case .timing, .allocations:
            if pass == RunPasses.Pass.allocations.rawValue {
                configuration.repetitions = RunPasses.allocationRepetitions(timing: configuration.effectiveRepetitions)
            }
            file = runInProcess(configuration)
        case .both:
            let seed = configuration.orderSeed ?? UInt64.random(in: 1...UInt64.max)
            let reps = configuration.effectiveRepetitions
            let threadCaches = ["MALLOC_CONF": "tcache:true"]  // jemalloc's default: as users run it
            let timing: ResultsFile
            do {
                if fork {
                    let processes = try (0..<reps).map { r in
                        FileHandle.standardError.write(Data("— timing pass, process \(r + 1) of \(reps)\n".utf8))
                        return try RunPasses.child(childArguments(configuration, seed: seed &+ UInt64(r), repetitions: 1),
                                                   environment: threadCaches)
                    }
                    timing = try ResultsFile.mergedPerProcess(processes)
                } else {
                    FileHandle.standardError.write(Data("— timing pass (child process, jemalloc thread caches on)\n".utf8))
                    timing = try RunPasses.child(childArguments(configuration, seed: seed, repetitions: reps), environment: threadCaches)
                }
            } catch let e as ResultsError { throw ValidationError(e.description) }
            FileHandle.standardError.write(Data("— allocation pass (this process, thread caches off: exact counts)\n".utf8))
            configuration.repetitions = RunPasses.allocationRepetitions(timing: reps)
            configuration.orderSeed = seed
            let counts = runInProcess(configuration)
            do { file = try RunPasses.combine(timing: timing, allocations: counts) } catch let e as ResultsError {
                throw ValidationError(e.description)
            }
        }
        try finish(file, url: url, latest: latest)
    }

    func runInProcess(_ configuration: RunConfiguration) -> ResultsFile {
        var runner = BenchmarkRunner(configuration: configuration)
        let tty = isatty(STDERR_FILENO) != 0
        runner.progress = { line in
            if tty && !line.hasPrefix("FAILED") {
                FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
            } else {
                FileHandle.standardError.write(Data("\(line)\n".utf8))
            }
        }
        let file = runner.run()
        if tty { FileHandle.standardError.write(Data("\n".utf8)) }
        return file
    }

    func finish(_ file: ResultsFile, url: URL, latest: URL?) throws {
        try file.write(to: url)
        if let latest { try file.write(to: latest) }
        print(SummaryTable.render(file))
        FileHandle.standardError.write(Data("results written to \(url.path)\(latest.map { " and \($0.lastPathComponent)" } ?? "")\n".utf8))
        for warning in file.harnessWarnings ?? [] {
            FileHandle.standardError.write(Data("WARNING: \(warning)\n".utf8))
        }
        let failed = file.rows.filter { $0.status != "ok" }
        if !failed.isEmpty {
            FileHandle.standardError.write(Data("\(failed.count) combination(s) FAILED verification: \(failed.map { "\($0.scenario.rawValue)/\($0.design)×\($0.threads)" }.joined(separator: ", "))\n".utf8))
            throw ExitCode(3)
        }
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List designs, scenarios and metrics.")

    @Option(help: "text, or json: the catalog scripts read (designs, scenarios, floors, element counts, the package-benchmark suite, which allocation counts are exact).")
    var format: String = "text"

    func validate() throws {
        guard ["text", "json"].contains(format) else {
            throw ValidationError("unknown format '\(format)'; valid formats: text, json")
        }
    }

    func run() throws {
        if format == "json" {
            print(String(decoding: try ResultsFile.encoder().encode(Catalog.current), as: UTF8.self))
            return
        }
        print("designs:")
        for d in SteppingDesign.allCases { print("  \(d.rawValue)\(d == .default ? " (default)" : "")") }
        print("\nscenarios (elements per repetition: quick / full; threads):")
        for s in ScenarioKind.allCases {
            let threads = s.threadCounts(requested: [1, 2, 4]).map(String.init).joined(separator: ",")
            print("  \(s.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)) \(s.elements(.quick)) / \(s.elements(.full)); threads \(threads)\n      \(s.summary)")
        }
        print("""

            metrics (per scenario, design, threads; median and 95% bootstrap CI over repetitions):
              ns/element, elements/s       wall time of the measured phase
              allocations/element          exact, jemalloc statistics (tcache off)
              cpu ns/element               getrusage user+system, all threads
              latency p50/p90/p99/p99.9/max  HdrHistogram, where per-event latency is meaningful
              ×seed, ×floor                ratio of median ns/element (async-step: of p50 latency)
              peak RSS                     per run
            """)
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export a results file as CSV, github-action-benchmark JSON or InfluxDB line protocol.")

    @Option(help: "csv, github-action-benchmark or influx.")
    var format: String

    @Option(help: "Write here (atomically) instead of stdout.")
    var output: String?

    @Argument(help: "A stepbench results file (schema stepbench/2 or /1).")
    var results: String

    func validate() throws {
        guard ExportFormat(rawValue: format) != nil else {
            throw ValidationError("unknown format '\(format)'; valid formats: \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let output {
            do { try RunConfiguration.checkWritable(URL(fileURLWithPath: output)) } catch let e as ConfigurationError {
                throw ValidationError(e.description)
            }
        }
    }

    func run() throws {
        let file: ResultsFile
        do { file = try ResultsFile.read(URL(fileURLWithPath: results)) } catch let e as ResultsError {
            FileHandle.standardError.write(Data("stepbench export: \(e.description)\n".utf8))
            throw ExitCode(1)
        }
        let text: String
        do { text = try Exporter.export(file, as: ExportFormat(rawValue: format)!) } catch let e as ResultsError {
            FileHandle.standardError.write(Data("stepbench export: \(results): \(e.description)\n".utf8))
            throw ExitCode(1)
        }
        guard let output else {
            print(text, terminator: "")
            return
        }
        do { try ResultsFile.writeAtomically(Data(text.utf8), to: URL(fileURLWithPath: output)) } catch let e as ResultsError {
            throw ValidationError(e.description)
        }
    }
}

struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two results files (or folders with latest.json): ratio, 95% CI, verdict per metric.",
        discussion: "Exit status: 0 no regression, 2 regression, 1 usage error (missing, unreadable or wrong-schema file).")

    @Argument(help: "Baseline results file, or a folder holding latest.json.")
    var baseline: String

    @Argument(help: "Current results file, or a folder holding latest.json.")
    var current: String

    @Option(help: "Smallest timing change that counts, as a fraction (0.05 = 5%).")
    var minEffect: Double = 0.05

    @Option(help: "text, markdown or json.")
    var format: String = ComparisonFormat.text.rawValue

    @Flag(help: "Compare only the exact metrics (instructions, allocations, failed verification): the CI gate. Timing rows are left out.")
    var exactOnly = false

    @Option(help: "Noise profile of this machine kind (from `stepbench noise`): widens each timing interval by the between-run drift it measured. Default: results/<machine-id>/noise.json of the current file's machine kind, when it exists. Timing rows the profile does not cover say no-drift-estimate instead of regression.")
    var noise: String?

    @Flag(help: "Use no noise profile, not even the committed one: no timing row can then be called a regression.")
    var noNoise = false

    func validate() throws {
        guard ComparisonFormat(rawValue: format) != nil else {
            throw ValidationError("unknown format '\(format)'; valid formats: \(ComparisonFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard minEffect > 0, minEffect < 10 else {
            throw ValidationError("--min-effect must be a positive fraction such as 0.05, got \(minEffect)")
        }
    }

    static func resolve(_ path: String) -> URL {
        var isDirectory: ObjCBool = false
        let url = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            return url.appendingPathComponent("latest.json")
        }
        return url
    }

    func run() throws {
        let files: [ResultsFile]
        let profile: NoiseProfile?
        do {
            files = try [baseline, current].map { try ResultsFile.read(Self.resolve($0)) }
            var path = noise
            let committed = "results/\(files[1].machine.machineID)/noise.json"
            if path == nil, !noNoise, FileManager.default.fileExists(atPath: committed) {
                path = committed
                FileHandle.standardError.write(Data("stepbench compare: drift allowances from \(committed) (--no-noise to leave them out)\n".utf8))
            }
            profile = try noNoise ? nil : path.map { try NoiseProfile.read(URL(fileURLWithPath: $0)) }
        } catch let e as ResultsError {
            throw ValidationError(e.description)
        }
        if let profile, profile.machineId != files[1].machine.machineID {
            FileHandle.standardError.write(Data("stepbench compare: warning: the noise profile is of machine kind \(profile.machineId), the current file of \(files[1].machine.machineID); its drift allowances may not fit\n".utf8))
        }
        var comparison = Comparison.compare(baseline: files[0], current: files[1], minEffect: minEffect, noise: profile)
        // Timing is not judged here: do not print verdicts for it (rows missing on one side stay).
        if exactOnly { comparison.rows.removeAll { !$0.exact && $0.verdict != .onlyInBaseline && $0.verdict != .onlyInCurrent } }
        print(try comparison.render(ComparisonFormat(rawValue: format)!), terminator: "")
        if !(exactOnly ? comparison.exactRegressions : comparison.regressions).isEmpty { throw ExitCode(2) }
    }
}

struct Noise: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure this machine's timing noise from A/A runs (one build, one configuration, separate processes) into a noise profile for `compare --noise`.",
        discussion: "Give at least 3 results files. scripts/regress --update-baseline writes results/<machine-id>/noise.json this way.")

    @Argument(help: "Results files of A/A runs (at least 3).")
    var runs: [String]

    @Option(help: "Where to write the profile (JSON, written atomically).")
    var output: String

    @Option(help: "The runs are the processes of an interleaved A/A session (scripts/abtest --update-noise), N processes per side: profile the interleaved protocol instead of single runs.")
    var interleaved: Int?

    func run() throws {
        let profile: NoiseProfile
        do {
            let files = try runs.map { try ResultsFile.read(Compare.resolve($0)) }
            profile = try interleaved.map { try NoiseProfile.measureInterleaved(processes: files, samplesPerSide: $0) }
                ?? NoiseProfile.measure(runs: files)
            try profile.write(to: URL(fileURLWithPath: output))
        } catch let e as ResultsError {
            throw ValidationError(e.description)
        }
        print("metric".padding(toLength: 44, withPad: " ", startingAt: 0) + "   reps  sampling σ  between σ   drift σ")
        for e in profile.entries {
            let name = "\(e.scenario) \(e.design) ×\(e.threads) \(e.metric)"
            print(name.padding(toLength: 44, withPad: " ", startingAt: 0)
                  + String(format: " %6d  %9.2f%%  %8.2f%%  %7.2f%%", e.repetitions, 100 * e.samplingSD, 100 * e.betweenSD, 100 * e.driftSD))
        }
        print("noise profile of \(profile.machineId) from \(profile.runs) runs written to \(output)")
    }
}

struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge results files of separate processes (one configuration) into one whose repetitions are the processes (each its medians).",
        discussion: "scripts/abtest merges each build's interleaved processes this way before comparing them.")

    @Argument(help: "Results files, one per process.")
    var runs: [String]

    @Option(help: "Where to write the merged file (JSON, written atomically).")
    var output: String

    func run() throws {
        do {
            let merged = try ResultsFile.mergedPerProcess(runs.map { try ResultsFile.read(Compare.resolve($0)) })
            try merged.write(to: URL(fileURLWithPath: output))
            print("\(merged.aggregation ?? "merged") written to \(output)")
        } catch let e as ResultsError {
            throw ValidationError(e.description)
        }
    }
}

struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Exact instructions per element under valgrind's callgrind, with the top functions per design.")

    @Option(help: "Comma-separated designs (default: all).")
    var design: String = SteppingDesign.allCases.map(\.rawValue).joined(separator: ",")

    @Option(help: "Comma-separated single-thread scenarios: sync-step, floor-sync.")
    var scenario: String = Profiler.scenarios.map(\.rawValue).joined(separator: ",")

    @Option(help: "Elements of the smaller run (the larger has three times as many).")
    var elements: Int = 4_000

    @Option(help: "Results file (default: results/<machine-id>/profile-<time>.json and profile-latest.json).")
    var output: String?

    @Option(help: "Folder for default results files.")
    var resultsDirectory: String = "results"

    func parsed() throws -> ([SteppingDesign], [ScenarioKind]) {
        let designs = try RunConfiguration.parseList(design, of: SteppingDesign.self, what: "design")
        let scenarios = try RunConfiguration.parseList(scenario, of: ScenarioKind.self, what: "scenario")
        for s in scenarios where !Profiler.scenarios.contains(s) {
            throw ConfigurationError("scenario '\(s.rawValue)' cannot be profiled exactly (more than one thread); profile: \(Profiler.scenarios.map(\.rawValue).joined(separator: ", "))")
        }
        return (designs, scenarios)
    }

    func validate() throws {
        do {
            _ = try parsed()
            guard elements > 0 else { throw ConfigurationError("--elements must be a positive number, got \(elements)") }
            if let output { try RunConfiguration.checkWritable(URL(fileURLWithPath: output)) }
        } catch let e as ConfigurationError {
            throw ValidationError(e.description)
        }
    }

    func run() throws {
        let (designs, scenarios) = try parsed()
        var profiler = Profiler()
        profiler.elementsLow = elements
        profiler.elementsHigh = elements * 3
        profiler.progress = { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
        let rows = try profiler.profile(scenarios: scenarios, designs: designs)
        let machine = MachineFingerprint.current()
        let file = ResultsFile.profiled(rows, machine: machine, elements: elements)
        let folder = URL(fileURLWithPath: resultsDirectory).appendingPathComponent(machine.machineID)
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let url = output.map { URL(fileURLWithPath: $0) } ?? folder.appendingPathComponent("profile-\(stamp).json")
        try file.write(to: url)
        if output == nil { try file.write(to: folder.appendingPathComponent("profile-latest.json")) }
        print("instructions per element (callgrind, measured window only; per function: exclusive per element):")
        for r in rows {
            print("  \(r.scenario.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(r.design.padding(toLength: 7, withPad: " ", startingAt: 0)) \(String(format: "%10.1f", r.instructionsPerElement))")
            for f in r.topFunctions.prefix(6) { print(String(format: "      %8.1f  ", f.instructionsPerElement ?? 0) + f.function) }
        }
        FileHandle.standardError.write(Data("profile written to \(url.path)\n".utf8))
    }
}
