import ArgumentParser
import Foundation
import StepBenchKit
import Stepping
@_spi(StepBench) import SteppingConformance

extension StepBench {
    struct Ab: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .slower: "a regression",
            .verificationFailed: "a run of either build failed a scenario's verification",
            .undecided: "rows still inconclusive",
            .failure: "bad input or a run that failed",
        ]
        static let configuration = CommandConfiguration(
            commandName: "ab",
            abstract: "Time two builds in one session, processes in adjacent pairs, until every row is decided.",
            discussion: """
                Each process is `BUILD run` of the abtest protocol, spelt out so that an older build \
                runs it too (`run --protocol abtest`: every scenario a design's synchronisation \
                moves, with its floor, at 2 threads, the suite's element counts). Pairs run A B, B A, … in \
                batches; after each batch the session looks (`stepbench compare --paired --looks`) and stops once \
                every row is decided, at the first regression, after --looks looks, or when another look \
                would spend --budget. With --noise: --pairs pairs of the timing protocol (`run --protocol \
                timing --repetitions 41`, spelt out too), written as a profile of interleaved runs (`stepbench noise \
                --interleaved`). scripts/abtest builds the two and calls this. \
                \(ExitStatus.sentence(exitStatuses))
                """)

        @Option(help: "The stepbench of build A (the baseline).")
        var a: String

        @Option(help: "The stepbench of build B.")
        var b: String

        @Option(help: "Pairs per batch (one look after each).")
        var batch = 4

        @Option(help: "The most looks the session may take (each look is decided at 1%/looks).")
        var looks = 6

        @Option(help: "Minutes the runs may take.")
        var budget: Double = 20

        @Option(help: "Comma-separated designs (default: all of build B's).")
        var design: String?

        @Option(help: "Keep every process's file and compare.md (the last look, as markdown) in this folder.")
        var out: String?

        @Option(help: "Instead of an A/B: write the timing protocol's interleaved noise profile here.")
        var noise: String?

        @Option(help: "With --noise: the pairs to run.")
        var pairs = 20

        func validate() throws {
            try PathCheck.executable(a, "--a", what: "a release stepbench")
            try PathCheck.executable(b, "--b", what: "a release stepbench")
            guard batch >= 1, looks >= 1, budget > 0 else {
                throw ValidationError("--batch and --looks must be at least 1 and --budget positive")
            }
            guard batch * looks >= 3 else { throw ValidationError("--batch × --looks must give at least 3 pairs") }
            guard pairs >= 3 else { throw ValidationError("--pairs must be at least 3, got \(pairs)") }
            if let out { try PathCheck.folder(out, "--out") }
            try StepBench.validating { _ = try designs() }
            if let noise {
                try StepBench.validating { try RunConfiguration.checkWritable(URL(fileURLWithPath: noise)) }
            }
        }

        /// --design's designs (nil: not given).
        func designs() throws -> [SteppingDesign]? {
            try design.map { try CommaSeparated.designs($0) }
        }

        static func log(_ line: String) { printError("== stepbench ab: \(line)\n") }

        /// One process of `binary`: `run` with `arguments` into `output`. A failed verification
        /// exits 3, any other failure 1, with what the process wrote.
        static func process(_ binary: String, _ arguments: [String], output: URL) throws -> URL {
            let outcome: ChildLaunch.Outcome
            do {
                outcome = try ChildLaunch(
                    executable: URL(fileURLWithPath: binary),
                    arguments: ["run"] + arguments + ["--output", output.path]
                ).run()
            } catch {
                throw ResultsError(.toolFailed, "cannot start \(binary) (\(error))")
            }
            guard outcome.succeeded else {
                printError(outcome.stderrText)
                if outcome.reason == .exit, outcome.status == 3 {
                    printError("stepbench ab: \(binary) failed a scenario's verification\n")
                    throw ExitStatus.verificationFailed.code
                }
                printError("stepbench ab: a run of \(binary) failed (exit \(outcome.status), see above)\n")
                throw ExitStatus.failure.code
            }
            return output
        }

        func run() throws {
            let work = FileManager.default.temporaryDirectory.appendingPathComponent(
                "stepbench-ab-\(UUID().uuidString)")
            try ResultsFile.makeFolder(work)
            defer { try? FileManager.default.removeItem(at: work) }
            let binaries: [InterleavedSession.Side: String] = [.a: a, .b: b]
            let file = { (side: InterleavedSession.Side, n: Int) in
                work.appendingPathComponent("\(side.rawValue.lowercased())\(n).json")
            }
            if let noise {
                let arguments = MeasuringProtocol.timing.runArguments() + ["--repetitions", "41"]
                Self.log("\(pairs) interleaved pairs of the timing protocol")
                var files: [InterleavedSession.Side: [ResultsFile]] = [:]
                for n in 1...pairs {
                    for side in InterleavedSession.order(ofPair: n) {
                        let url = try Self.process(binaries[side]!, arguments, output: file(side, n))
                        files[side, default: []].append(try Inputs.results(at: url))
                    }
                }
                let profile = try NoiseProfile.measureInterleaved(
                    processes: files[.a]! + files[.b]!, samplesPerSide: pairs)
                try profile.write(to: URL(fileURLWithPath: noise))
                Self.log("wrote the noise profile of \(profile.machineId) from \(pairs) pairs to \(noise)")
                return
            }

            let arguments = MeasuringProtocol.abtest.runArguments(designs: try designs())
            let session = InterleavedSession(batch: batch, looks: looks, budget: budget * 60)
            let started = Date()
            let looks = self.looks
            let outcome = try session.run(
                process: { side, n in try Self.process(binaries[side]!, arguments, output: file(side, n)) },
                look: { a, b in
                    let comparison = try Comparison.paired(
                        a: try a.map(Inputs.results(at:)), b: try b.map(Inputs.results(at:)), looks: looks)
                    let status: InterleavedSession.Status =
                        !comparison.regressions.isEmpty ? .regression : comparison.isDecided ? .decided : .inconclusive
                    return (comparison, status)
                }, log: Self.log)
            if let comparison = outcome.comparison { print(try comparison.render(.text), terminator: "") }
            let verdict =
                switch outcome.status {
                case .decided: "every decided row decided, no regression"
                case .regression: "REGRESSION"
                case .inconclusive: "some rows still inconclusive (each says what it could detect)"
                }
            Self.log(
                "\(verdict) — \(outcome.pairs) pairs, \(outcome.looks) look(s), \(Int(Date().timeIntervalSince(started))) s of runs"
            )
            if let out, let comparison = outcome.comparison {
                for n in 1...outcome.pairs {
                    for side in [InterleavedSession.Side.a, .b] {
                        let from = file(side, n)
                        let to = URL(fileURLWithPath: out).appendingPathComponent(from.lastPathComponent)
                        try? FileManager.default.removeItem(at: to)
                        try FileManager.default.copyItem(at: from, to: to)
                    }
                }
                let markdown = try comparison.render(.markdown)
                try Data(markdown.utf8).write(
                    to: URL(fileURLWithPath: out).appendingPathComponent("compare.md"), options: .atomic)
                Self.log("kept every process's file and compare.md in \(out)")
            }
            switch outcome.status {
            case .decided: break
            case .regression: throw ExitStatus.slower.code
            case .inconclusive: throw ExitStatus.undecided.code
            }
        }
    }
}
