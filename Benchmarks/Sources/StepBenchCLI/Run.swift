import ArgumentParser
import Foundation
import StepBenchKit
import StepBenchScenarios
@_spi(Measurement) import Stepping
import Synchronization

extension StepBench {
    struct Run: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .verificationFailed: "a scenario failed its own verification",
            .designFault: "a design crashed its measuring process or hung in it (stopped by --watchdog)",
        ]
        static let configuration = CommandConfiguration(
            abstract: "Run scenarios × designs; write a results file; print a summary table.",
            discussion: """
                The results file marks each row that failed its verification, crashed or hung (status \
                failed, crashed or hung) and holds every other row. \(ExitStatus.sentence(exitStatuses))
                """)

        @OptionGroup var selection: Selection

        @Option(
            help: "Comma-separated thread counts for scenarios that take them (default: 1,2,4).",
            transform: CommaSeparated.threads)
        var threads: [Int] = [1, 2, 4]

        @Option(help: "Elements per repetition (rounds for cancel-race); default from the preset.")
        var elements: Int?

        @Option(help: "Repetitions per combination; default from the preset (quick 5, full and brief 11).")
        var repetitions: Int?

        @Option(help: "How much to measure: elements and repetitions per combination.")
        var preset: Preset = .quick

        @Option(
            help:
                "Seconds one repetition of a combination may take: a slower one, timed at its warm-up, runs a power-of-two fraction of the elements (its row says how many). Default from the preset (quick 0.2, full 1, brief none); 0: no limit. Not with --elements or --no-warmup."
        )
        var repetitionBudget: Double?

        @OptionGroup var destination: Destination

        @Flag(help: "Measure a debug build anyway (the results say debug).")
        var allowDebug = false

        @Flag(help: "Skip the warm-up pass.")
        var noWarmup = false

        @Option(help: "Seed of the shuffled order of each round (default: a fresh one; the results file records it).")
        var orderSeed: UInt64?

        @Option(
            help:
                "both: timing in a child process with jemalloc's thread caches on, as users run it, then exact allocation counts in a shorter pass with them off; timing or allocations: that pass alone, in this process."
        )
        var pass: RunPasses.Pass = .both

        @Flag(
            help:
                "Process isolation: each round of the timing pass in a fresh process, merged as `stepbench merge` does. Use it before publishing a timing claim (a process's heap and code layout move its numbers)."
        )
        var fork = false

        @Option(
            help: ArgumentHelp(
                "A counting build of stepbench (swift build -c release --traits Counting, the binary copied aside; scripts/bench makes one): after the other passes it runs the same combinations, counting what contention made each design do (exchanges lost, lock slow paths, yields, wake-ups, executor jobs per element).",
                valueName: "binary"))
        var countingBuild: String?

        @Option(
            help:
                "Seconds a measuring process may make no progress (begin no repetition) before it is stopped and its combination marked hung; the run goes on without it."
        )
        var watchdog: Double = PassRequest.defaultWatchdog

        @Option(
            name: .customLong("protocol"),
            help:
                "A run the scripts make the same way every time: timing (the gate's timing comparison and the noise profiles: sync-step and its floor at the suite's elements, for the designs of --design whose counts are exact) or abtest (an interleaved A/B's contended protocol: every scenario a design's synchronisation moves, with its floor, at 2 threads, --preset brief). It sets the scenarios, so not with --scenario; nor with what it fixes (timing: --elements; abtest: --threads, --preset)."
        )
        var measuringProtocol: MeasuringProtocol?

        @Option(
            help: ArgumentHelp(
                "After the timing pass, add rounds to each verdict question the rounds left open (neither a winner separated from every other design nor an equivalence within the tool's margin), between its contenders only, until each is decided or this many seconds are spent; 0: none. Not with --fork.",
                valueName: "seconds"))
        var decide: Double = 0

        var scenarios: [ScenarioKind] { measuringProtocol?.scenarios ?? selection.scenario ?? ScenarioKind.allCases }

        func makeConfiguration() throws -> RunConfiguration {
            var c = RunConfiguration()
            c.designs = measuringProtocol.map { $0.designs(among: selection.design) } ?? selection.design
            c.scenarios = scenarios
            c.threads = measuringProtocol?.threads ?? threads
            c.preset = measuringProtocol?.preset ?? preset
            c.elements = measuringProtocol?.elements ?? elements
            c.repetitions = repetitions
            c.repetitionBudget = repetitionBudget
            c.allowDebug = allowDebug
            c.warmup = !noWarmup
            c.orderSeed = orderSeed
            try c.validate()
            return c
        }

        func validate() throws {
            if let measuringProtocol {
                let fixed: [(String, Bool)] = [
                    ("--scenario", selection.scenario != nil),
                    ("--elements", measuringProtocol.elements != nil && elements != nil),
                    ("--threads", measuringProtocol.threads != nil && threads != [1, 2, 4]),
                    ("--preset", measuringProtocol.preset != nil && preset != .quick),
                ]
                if let (flag, _) = fixed.first(where: \.1) {
                    throw ValidationError("--protocol \(measuringProtocol.rawValue) sets \(flag) itself; leave it out")
                }
                guard !measuringProtocol.designs(among: selection.design).isEmpty else {
                    throw ValidationError(
                        "--protocol \(measuringProtocol.rawValue): none of the designs of --design is measured by it (timing measures the designs whose counts are exact: \(StepBenchKit.Gate.designs(among: SteppingDesign.described).map(\.rawValue).joined(separator: ", ")))"
                    )
                }
            }
            guard decide >= 0, decide.isFinite else {
                throw ValidationError("--decide must be 0 (add no rounds) or a number of seconds, e.g. 150")
            }
            if decide > 0 && (fork || pass != .both) {
                throw ValidationError(
                    "--decide adds rounds to the timing pass of a run in one child process: not with --fork or --pass \(pass.rawValue)"
                )
            }
            guard watchdog > 0 else { throw ValidationError("--watchdog must be positive, e.g. 120") }
            guard !Contention.isCounting else {
                throw ValidationError(
                    "this stepbench is a counting build (its designs count contention, which costs time): it runs only the counting pass of another stepbench's run (--counting-build); time with a build made without --traits Counting"
                )
            }
            try StepBench.validating {
                _ = try makeConfiguration()
                try destination.checkWritable()
                if let countingBuild {
                    guard FileManager.default.isExecutableFile(atPath: countingBuild) else {
                        throw ValidationError(
                            "--counting-build: \(countingBuild) is not an executable; build one with swift build -c release --product stepbench --package-path Benchmarks --traits Counting and copy its binary aside (scripts/bench does)"
                        )
                    }
                    guard pass == .both else {
                        throw ValidationError("--counting-build: only with --pass both (it adds a third pass)")
                    }
                }
            }
        }

        func run() throws {
            Interruption.install()
            var configuration = try makeConfiguration()
            let machine = MachineFingerprint.current()
            let (url, latest) = destination.urls(machineID: machine.machineID)
            try RunConfiguration.checkWritable(url)
            let file: ResultsFile
            switch pass {
            case .timing:
                Interruption.during("the timing pass (in this process)")
                file = runInProcess(configuration)
            case .allocations:
                Interruption.during("the allocation pass (in this process)")
                configuration.repetitions = RunPasses.allocationRepetitions(timing: configuration.effectiveRepetitions)
                file = runInProcess(configuration)
            case .both:
                let seed = configuration.orderSeed ?? UInt64.random(in: 1...UInt64.max)
                let reps = configuration.effectiveRepetitions
                let threadCaches = Measuring.time.environment
                var timing: ResultsFile
                if fork {
                    var one = configuration
                    one.repetitions = 1
                    var processes: [ResultsFile] = []
                    for r in 0..<reps {
                        printError("— timing pass, process \(r + 1) of \(reps)\n")
                        Interruption.during("the timing pass (process \(r + 1) of \(reps))")
                        let faults = processes.last.map(PassRequest.Fault.recorded) ?? []
                        // the first process sizes the combinations, the others run its sizes
                        one.sizedElements = processes.first.map { $0.rows.map(\.elements) }
                        processes.append(
                            try PassRequest(one, pass: .timing, orderSeed: seed &+ UInt64(r), faults: faults)
                                .ask(Child.process, environment: threadCaches, watchdog: watchdog))
                    }
                    timing = try ResultsFile.mergedPerProcess(processes)
                } else {
                    let window = Quietness.Reading.now()
                    printError("— timing pass (child process, jemalloc thread caches on)\n")
                    Interruption.during("the timing pass")
                    timing = try PassRequest(configuration, pass: .timing, orderSeed: seed).ask(
                        Child.process, environment: threadCaches, watchdog: watchdog)
                    if decide > 0 {
                        printError("— deciding: rounds added to the open questions (at most \(Int(decide)) s)\n")
                        Interruption.during("the rounds added to decide (the timing pass had finished)")
                        var deciding = Deciding(budget: decide) { c in
                            try PassRequest(c, pass: .timing, orderSeed: c.orderSeed ?? seed).ask(
                                Child.process, environment: threadCaches, watchdog: watchdog)
                        }
                        deciding.progress = { printError("\($0)\n") }
                        timing = try deciding.extend(timing, configuration: configuration, seed: seed)
                    }
                    timing.quietness = window.finish()
                }
                // the passes after it count over the elements the timing pass sized
                configuration.sizedElements = timing.rows.map(\.elements)
                printError("— allocation pass (child process, thread caches off: exact counts)\n")
                Interruption.during("the allocation pass (the timing pass had finished)")
                let allocations = try PassRequest(
                    configuration, pass: .allocations, orderSeed: seed, faults: PassRequest.Fault.recorded(in: timing)
                ).ask(Child.process, environment: Measuring.counts.environment, watchdog: watchdog)
                var combined = try RunPasses.combine(timing: timing, allocations: allocations)
                if let countingBuild {
                    printError("— counting pass (\(countingBuild), a counting build: contention per element)\n")
                    Interruption.during("the counting pass (the timing and allocation passes had finished)")
                    let request = PassRequest(
                        configuration, pass: .counting, orderSeed: seed,
                        faults: PassRequest.Fault.recorded(in: combined))
                    combined = try RunPasses.combine(
                        combined,
                        counting: request.ask(
                            Child.process.running(URL(fileURLWithPath: countingBuild)),
                            environment: Measuring.counts.environment, watchdog: watchdog))
                }
                file = combined
            }
            try finish(file, url: url, latest: latest)
        }

        func runInProcess(_ configuration: RunConfiguration) -> ResultsFile {
            var runner = BenchmarkRunner(configuration: configuration)
            let tty = isatty(STDERR_FILENO) != 0
            runner.progress = { line in
                printError(tty && !line.hasPrefix("FAILED") ? "\r\u{1B}[K\(line)" : "\(line)\n")
            }
            let file = runner.run()
            if tty { printError("\n") }
            return file
        }

        func finish(_ file: ResultsFile, url: URL, latest: URL?) throws {
            Interruption.during(
                "writing the results",
                outcome: "each file is written whole or not at all (a temporary file, then a rename)")
            try file.write(to: url)
            if let latest { try file.write(to: latest) }
            print(SummaryTable.render(file))
            for verdict in Verdict.decide(file) {
                printError("verdict \(verdict.summary)\n")
            }
            if let quietness = file.quietness {
                printError(
                    "while timing, \(quietness.summary)\(quietness.disturbed ? ": DISTURBED, the verdicts may be the load's" : "")\n"
                )
            }
            printError("results written to \(url.path)\(latest.map { " and \($0.lastPathComponent)" } ?? "")\n")
            for warning in file.harnessWarnings ?? [] {
                printError("WARNING: \(warning)\n")
            }
            func names(_ rows: [ResultsFile.Row]) -> String {
                rows.map { "\($0.scenario.rawValue)/\($0.design)×\($0.threads)" }.joined(separator: ", ")
            }
            let faults = file.rows.filter(\.status.isFault)
            let failed = file.rows.filter { $0.status == .failed }
            for row in faults {
                printError(
                    "\(row.status.rawValue.uppercased()): \(row.design) in \(row.scenario.rawValue) ×\(row.threads): \(row.failure ?? "")\n"
                )
            }
            if !failed.isEmpty { printError("\(failed.count) combination(s) FAILED verification: \(names(failed))\n") }
            if !faults.isEmpty {
                printError(
                    "\(faults.count) combination(s) crashed or hung (the others were measured): \(names(faults))\n")
                throw ExitStatus.designFault.code
            }
            if !failed.isEmpty { throw ExitStatus.verificationFailed.code }
        }
    }
}

/// What `stepbench run` says when SIGINT or SIGTERM stops it: a run writes its file only when
/// every pass has finished, so a stopped run wrote nothing, and it says so, naming the pass it
/// was in (and which had finished); then it dies of the signal, as it would have (its measuring
/// children die with it, ``ChildGuard``). The handler only writes a message composed beforehand
/// (`write(2)` is async-signal-safe), restores the default action and raises the signal again.
enum Interruption {
    static let nothingWritten = "nothing written (a run writes its results only when every pass has finished)"
    private static let capacity = 1_024
    /// The message's tail, composed by ``during(_:outcome:)``; the handler writes it as it is.
    nonisolated(unsafe) private static let message = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
    /// How much of it is written (0 while it is rewritten): released after the bytes, acquired
    /// by the handler before it reads them.
    private static let length = Atomic<Int>(0)

    /// Where the run is, for the message.
    static func during(_ what: String, outcome: String = nothingWritten) {
        let text = Array(" during \(what): \(outcome)\n".utf8.prefix(capacity))
        length.store(0, ordering: .sequentiallyConsistent)  // a signal meanwhile says less, never garbage
        text.withUnsafeBufferPointer { message.update(from: $0.baseAddress!, count: $0.count) }
        length.store(text.count, ordering: .releasing)
    }

    static func install() {
        during("its set-up")
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                let name: StaticString =
                    number == SIGINT ? "\nstepbench run: stopped by SIGINT" : "\nstepbench run: stopped by SIGTERM"
                _ = write(STDERR_FILENO, name.utf8Start, name.utf8CodeUnitCount)
                _ = write(STDERR_FILENO, Interruption.message, Interruption.length.load(ordering: .acquiring))
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }
}
