import ArgumentParser
import Foundation
import StepBenchKit
@_spi(StepBench) import SteppingConformance
import Synchronization

extension StepBench {
    struct Gate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "The CI gate's deterministic checks: measure a build's exact counts, decide, keep the thresholds.",
            discussion:
                "scripts/regress and scripts/mutants call these; they ask this build's catalog what to measure (`stepbench list --format json`), so the scripts never do. Each command's help says what each of its endings means.",
            subcommands: [Check.self, Measure.self, Thresholds.self, Agree.self])
    }
}

/// Work started on a thread of its own, beside what the caller does next; ``result()`` waits
/// for it. A child process it starts lives as long as that thread waits for it (``ChildLaunch``).
final class Beside<Value: Sendable>: Sendable {
    private let outcome = Mutex<Result<Value, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () throws -> Value) {
        Thread { [self] in
            let result = Result { try work() }
            outcome.withLock { $0 = result }
            done.signal()
        }.start()
    }

    /// Waits for the work to end (at once when it has) and returns what it returned, or throws
    /// what it threw; asked again, the same.
    func result() throws -> Value {
        if let known = outcome.withLock({ $0 }) { return try known.get() }
        done.wait()
        done.signal()  // for the next caller
        return try outcome.withLock { $0! }.get()
    }
}

/// The folder a gate command keeps its pieces in: `--work`, or a temporary one removed at the end.
struct GateWork: ParsableArguments {
    @Option(help: "Keep every piece (profiles, runs, the suite's output) in this folder (default: a temporary one).")
    var work: String?

    func folder() throws -> (url: URL, temporary: Bool) {
        if let work {
            // found at run time: a failure (its message), not a usage error
            do { return (try PathCheck.folder(work, "--work"), false) } catch let e as ValidationError {
                throw ResultsError(.unwritable, e.message)
            }
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("stepbench-gate-\(UUID().uuidString)")
        try ResultsFile.makeFolder(url)
        return (url, true)
    }
}

extension StepBench.Gate {
    static func log(_ line: String) { printError("== stepbench gate: \(line)\n") }

    /// This build: this process's executable, in this folder.
    static var thisBuild: StepBenchKit.Gate.Build {
        StepBenchKit.Gate.Build(
            tool: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
            tree: URL(fileURLWithPath: FileManager.default.currentDirectoryPath), name: "current")
    }

    /// Measures `build` as this build's catalog asks, for `designs` (nil: all); a failed
    /// verification exits 3, any other failure 1, with what the build wrote.
    static func measure(_ build: StepBenchKit.Gate.Build, designs: [String]?, output: URL, pieces: URL) throws -> [URL]
    {
        do {
            let plan = try StepBenchKit.Gate.Plan(
                catalog: .current, known: try build.knownScenarios(), only: designs)
            return try StepBenchKit.Gate.measure(build, plan: plan, output: output, pieces: pieces, log: log)
        } catch let failure as ResultsError where [.toolFailed, .verificationFailed].contains(failure.kind) {
            // the build's own output, then what failed: no "Error:" before the build's lines
            printError(failure.description + "\n")
            throw ExitStatus(failure.kind).code
        }
    }

    /// `swift package benchmark ARGUMENTS` of the suite's exact benchmarks in `package`, its
    /// output (build lines included) in `log`; its exit status. `writing`: a folder the plugin
    /// may write to (with the package's own folder, where it keeps its baselines).
    static func plugin(_ arguments: [String], package: String, writing: URL?, log: URL) throws -> (Int32, String) {
        let arguments =
            ["package", "--package-path", package]
            + (writing.map { ["--allow-writing-to-package-directory", "--allow-writing-to-directory", $0.path] } ?? [])
            + ["benchmark"] + arguments + ["--no-progress", "--filter", ThresholdPolicy.filter(.current)]
        let outcome: ChildLaunch.Outcome
        do {
            outcome = try ChildLaunch.command("swift", arguments).run(mergingOutput: true)
        } catch {
            throw ResultsError(.toolFailed, "cannot start swift package benchmark (\(error)); is swift on PATH?")
        }
        try ResultsFile.writeAtomically(outcome.stdout, to: log)
        return (outcome.reason == .exit ? outcome.status : 128 + outcome.status, outcome.stdoutText)
    }

    /// `swift package benchmark thresholds ACTION` of the suite's exact benchmarks in `package`
    /// (a run of the suite, or with `baseline`, that stored run's results), its output in
    /// `log`; its exit status.
    static func suite(
        _ action: String, baseline: String? = nil, package: String, path: URL, log: URL, writing: Bool
    ) throws -> (Int32, String) {
        try plugin(
            ["thresholds", action] + (baseline.map { [$0] } ?? []) + ["--path", path.path], package: package,
            writing: writing ? path : nil, log: log)
    }

    /// The name of the gate's one run of the package-benchmark suite, a baseline stored in the
    /// package's .benchmarkBaselines/ while the gate reads it (steps 3 and 4), then removed.
    static let suiteRun = "stepbench-gate"

    /// Removes the stored run `suiteRun` from `package`'s .benchmarkBaselines/ (and the folder
    /// itself when nothing else is stored there).
    static func removeSuiteRun(package: String) {
        let stored = URL(fileURLWithPath: package).appendingPathComponent(".benchmarkBaselines")
        let manager = FileManager.default
        for target in (try? manager.contentsOfDirectory(atPath: stored.path)) ?? [] {
            let folder = stored.appendingPathComponent(target)
            try? manager.removeItem(at: folder.appendingPathComponent(suiteRun))
            if (try? manager.contentsOfDirectory(atPath: folder.path))?.isEmpty == true {
                try? manager.removeItem(at: folder)
            }
        }
        if (try? manager.contentsOfDirectory(atPath: stored.path))?.isEmpty == true {
            try? manager.removeItem(at: stored)
        }
    }

    struct Check: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .slower: "a step failed: a regression, a threshold exceeded, or counts that disagree",
            .verificationFailed: "a scenario failed its verification",
        ]
        static let configuration = CommandConfiguration(
            abstract: "Measure this build and decide it against a baseline: the CI gate's verdict.",
            discussion: """
                1–2. This build's exact counts (instructions and paths under callgrind, allocations per \
                element at 1 and 2 threads, every scenario's verification) against --baseline, or against \
                --base-tool measured here and now (`compare --exact-only`'s rows). With --thresholds: \
                3. the package-benchmark suite (--package) against those threshold files (mallocCountTotal \
                of the benchmarks with exact counts); 4. package-benchmark's malloc-interposer counts \
                against stepbench's jemalloc counts (`stepbench gate agree`). Each step prints its table; the \
                last lines say which failed. Run it in this build's checkout. \
                \(ExitStatus.sentence(exitStatuses))
                """)

        @Option(help: "The committed baseline (results/<machine-id>/baseline.json).")
        var baseline: String?

        @Option(help: "Instead of --baseline: the stepbench of an older build, measured here and now.")
        var baseTool: String?

        @Option(help: "The checkout --base-tool runs in (its files name its commit).")
        var baseTree: String?

        @Option(help: "The package-benchmark threshold files to check (Benchmarks/Thresholds/<machine-id>/).")
        var thresholds: String?

        @Option(help: "The package of the package-benchmark suite.")
        var package = "Benchmarks"

        @OptionGroup var work: GateWork

        @Option(
            help: ArgumentHelp(
                "Write a differential flame graph (SVG) of each exact row that moved into this folder (`compare --flame-graphs`).",
                valueName: "folder"))
        var flameGraphs: String?

        func validate() throws {
            guard (baseline == nil) != (baseTool == nil) else {
                throw ValidationError("give --baseline FILE or --base-tool BINARY --base-tree FOLDER (one of them)")
            }
            guard (baseTool == nil) == (baseTree == nil) else {
                throw ValidationError("--base-tool and --base-tree go together")
            }
            if let baseTool { try PathCheck.executable(baseTool, "--base-tool") }
            if let baseline, !FileManager.default.fileExists(atPath: baseline) {
                throw ValidationError(
                    "--baseline: no file \(baseline); make one with scripts/regress --update-baseline")
            }
            if let thresholds {
                var folder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: thresholds, isDirectory: &folder), folder.boolValue else {
                    throw ValidationError(
                        "--thresholds: no folder \(thresholds); make it with scripts/regress --update-baseline")
                }
            }
        }

        func run() throws {
            let (folder, temporary) = try work.folder()
            defer { if temporary { try? FileManager.default.removeItem(at: folder) } }
            let current = folder.appendingPathComponent("current.json")
            let base: URL
            if let baseTool, let baseTree {
                base = folder.appendingPathComponent("base.json")
                let build = StepBenchKit.Gate.Build(
                    tool: URL(fileURLWithPath: baseTool), tree: URL(fileURLWithPath: baseTree), name: "base")
                _ = try StepBench.Gate.measure(build, designs: nil, output: base, pieces: folder)
            } else {
                base = Inputs.url(baseline!)
            }
            // Step 3's one run of the suite (its release build, then its benchmarks) starts now, beside
            // steps 1–2: what it gates (exact malloc counts) and what they measure (instructions
            // under callgrind, allocations) do not depend on the schedule, and its build's
            // one-module-at-a-time compiles fill the core the profile's serial parts leave idle.
            let suiteRun = thresholds.map { _ in
                log(
                    "3. (beside 1–2) the package-benchmark suite's release build and one run, stored as \(StepBench.Gate.suiteRun); its output in \(folder.appendingPathComponent("bench-run.txt").path)"
                )
                return Beside {
                    try StepBench.Gate.plugin(
                        ["baseline", "update", StepBench.Gate.suiteRun], package: package, writing: folder,
                        log: folder.appendingPathComponent("bench-run.txt"))
                }
            }
            // However the gate ends, the suite's run has ended and its stored results are gone first.
            defer {
                if let suiteRun {
                    _ = try? suiteRun.result()
                    StepBench.Gate.removeSuiteRun(package: package)
                }
            }
            let runs = try StepBench.Gate.measure(thisBuild, designs: nil, output: current, pieces: folder)

            var failed: [String] = []
            log("1–2. instructions, allocations and verification against \(baseline ?? "the base build")")
            let files = try [base, current].map(Inputs.results(at:))
            try Comparison.checkToolchains(baseline: files[0], current: files[1])
            let comparison = Comparison.compare(baseline: files[0], current: files[1]).exactOnly
            print(try comparison.render(.text), terminator: "")
            if let flameGraphs, comparison.attributions?.isEmpty == false {
                try StepBench.writeFlameGraphs(files[0], files[1], into: flameGraphs, command: "gate")
            }
            if !comparison.exactRegressions.isEmpty {
                failed.append("exact metrics (rows marked REGRESSION with 'exact' above)")
            }

            if let thresholds, let suiteRun {
                let path = URL(fileURLWithPath: thresholds).standardizedFileURL
                // One run of the suite serves steps 3 and 4: stored as a baseline, then checked
                // against the thresholds and written out as counts, neither running it again.
                log(
                    "3. package-benchmark thresholds check against \(thresholds) (one run of the suite, stored as \(StepBench.Gate.suiteRun))"
                )
                let (ran, runOutput) = try suiteRun.result()
                let (status, output) =
                    ran == 0
                    ? try StepBench.Gate.suite(
                        "check", baseline: StepBench.Gate.suiteRun, package: package, path: path,
                        log: folder.appendingPathComponent("bench-check.txt"), writing: false) : (ran, runOutput)
                print(ThresholdPolicy.shown(output))
                switch ThresholdPolicy.CheckOutcome(output: output, status: status) {
                case .passed, .improvementOnly: break
                case .regression: failed.append("package-benchmark thresholds (tables above)")
                case .failed(let status):
                    failed.append(
                        "swift package benchmark thresholds check did not complete (exit \(status); a benchmark crashed or failed, output above)"
                    )
                }

                log("4. malloc-interposer counts against jemalloc counts")
                let counts = folder.appendingPathComponent("bench")
                try ResultsFile.makeFolder(counts)
                let (updated, updateOutput) =
                    ran == 0
                    ? try StepBench.Gate.suite(
                        "update", baseline: StepBench.Gate.suiteRun, package: package, path: counts,
                        log: folder.appendingPathComponent("bench-counts.txt"), writing: true) : (ran, runOutput)
                if updated != 0 {
                    print(ThresholdPolicy.shown(updateOutput, last: 30))
                    failed.append(
                        "the package-benchmark suite did not run to the end for the agreement check (exit \(updated), output above)"
                    )
                } else {
                    let combined = try ResultsFile.combined(
                        try runs.map(Inputs.results(at:)), names: runs.map(\.lastPathComponent), acrossBuilds: true)
                    let agreement = try MallocAgreement.check(
                        counts: try MallocAgreement.benchmarkCounts(in: counts), rows: combined.rows,
                        benchmarks: Catalog.current.benchmarks, source: "the gate's allocation runs")
                    print(agreement.text, terminator: "")
                    if !agreement.agrees { failed.append("malloc-interposer and jemalloc disagree (table above)") }
                }
            }

            for failure in failed { printError("stepbench gate: REGRESSION: \(failure)\n") }
            if !failed.isEmpty { throw ExitStatus.slower.code }
            log(
                thresholds == nil
                    ? "no regression in exact counts against \(baseline ?? "the base build")"
                    : "no regression in instructions, allocations, thresholds or verification")
        }
    }

    struct Measure: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .verificationFailed: "a scenario failed its verification"
        ]
        static let configuration = CommandConfiguration(
            abstract: "Measure one build's exact counts as the gate compares them, into one results file.",
            discussion:
                "The profile (instructions of the profiled scenarios, every path's exact counts) of every design, and the allocation runs of the designs whose counts are exact, as this build's catalog asks, run by --tool in --tree and combined by its `merge --combine`. An older --tool is asked only for the scenarios it knows. "
                + ExitStatus.sentence(exitStatuses)
        )

        @Option(help: "The stepbench of the build to measure (default: this one).")
        var tool: String?

        @Option(help: "The checkout it runs in (default: this folder).")
        var tree: String?

        @Option(help: "Only these designs (comma-separated).")
        var design: String?

        @Option(help: "The combined results file to write.")
        var output: String

        @OptionGroup var work: GateWork

        func validate() throws {
            if let tool { try PathCheck.executable(tool, "--tool") }
            try StepBench.validating { try RunConfiguration.checkWritable(URL(fileURLWithPath: output)) }
        }

        func run() throws {
            let (folder, temporary) = try work.folder()
            defer { if temporary { try? FileManager.default.removeItem(at: folder) } }
            var build = thisBuild
            if let tool { build.tool = URL(fileURLWithPath: tool) }
            if let tree { build.tree = URL(fileURLWithPath: tree) }
            build.name = URL(fileURLWithPath: output).deletingPathExtension().lastPathComponent
            let designs = design.map { $0.split(separator: ",").map(String.init) }
            _ = try StepBench.Gate.measure(
                build, designs: designs, output: URL(fileURLWithPath: output), pieces: folder)
        }
    }

    struct Thresholds: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the package-benchmark thresholds the gate checks (on purpose: review, commit).",
            discussion:
                "Runs the suite's benchmarks with exact counts (`swift package benchmark thresholds update`) into FOLDER and keeps only what the gate checks: mallocCountTotal of those benchmarks; the files of every other benchmark are deleted."
        )

        @Argument(help: "The threshold folder (Benchmarks/Thresholds/<machine-id>/).")
        var folder: String

        @Option(help: "The package of the package-benchmark suite.")
        var package = "Benchmarks"

        @Flag(help: "Only apply the policy to the files already in FOLDER (no benchmark runs).")
        var policyOnly = false

        func run() throws {
            let path = URL(fileURLWithPath: folder).standardizedFileURL
            try ResultsFile.makeFolder(path)
            if !policyOnly {
                log("package-benchmark thresholds into \(folder)")
                let output = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "stepbench-thresholds-\(UUID().uuidString).txt")
                defer { try? FileManager.default.removeItem(at: output) }
                let (status, text) = try StepBench.Gate.suite(
                    "update", package: package, path: path, log: output, writing: true)
                guard status == 0 else {
                    print(ThresholdPolicy.shown(text))
                    throw ResultsError(
                        .toolFailed,
                        "swift package benchmark thresholds update failed (exit \(status), output above)")
                }
            }
            let (trimmed, deleted) = try ThresholdPolicy.apply(to: path, catalog: .current)
            printError(
                "stepbench gate thresholds: kept only \(ThresholdPolicy.gatedMetrics.joined(separator: ", ")) in \(trimmed.count) files; removed \(deleted.count) files of benchmarks whose counts follow thread timing\n"
            )
        }
    }
}
