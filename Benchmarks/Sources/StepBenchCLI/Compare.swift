import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Compare: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .slower: "a regression",
            .undecided: "with --paired, a row still inconclusive (more pairs could decide it)",
            .failure: "bad input (a missing, unreadable or wrong-schema file) or a failure",
        ]
        static let configuration = CommandConfiguration(
            abstract:
                "Compare two results files (or folders with latest.json): ratio, 95% CI, verdict per metric; with --paired, processes that ran in adjacent pairs.",
            discussion: ExitStatus.sentence(exitStatuses)
        )

        @Argument(
            help: ArgumentHelp(
                "The baseline and the current results file (a folder: its latest.json); with --paired, A1 B1 A2 B2 … (at least 3 pairs).",
                valueName: "files"))
        var files: [String]

        @Flag(
            help:
                "The files are A and B processes that ran in adjacent pairs (scripts/abtest), A the baseline: each row's primary metric decided on the Student-t interval of the mean log ratio over the pairs, rows sharing the family-wise 1% by Holm, divided by --looks when a session looks more than once."
        )
        var paired = false

        @Option(help: "With --paired: the most looks the session may take (each look is decided at 1%/looks).")
        var looks: Int?

        @OptionGroup var effect: MinEffectOption

        @Option(help: "The output's format.")
        var format: ComparisonFormat = .text

        @Flag(
            help:
                "Compare only the exact metrics (instructions, allocations, failed verification): the CI gate. Timing rows are left out."
        )
        var exactOnly = false

        @OptionGroup var noiseChoice: NoiseOption
        var noise: String? { noiseChoice.noise }
        var noNoise: Bool { noiseChoice.noNoise }

        @Option(
            help: ArgumentHelp(
                "Write a differential flame graph (SVG: red more instructions, blue fewer) of each row whose count moved into this folder, from the files' whole profiles.",
                valueName: "folder"))
        var flameGraphs: String?

        func validate() throws {
            if paired {
                try Paired.check(files: files, looks: looks ?? 1)
                let others =
                    [exactOnly ? "--exact-only" : nil].compactMap { $0 } + noiseChoice.given
                    + [flameGraphs != nil ? "--flame-graphs" : nil].compactMap { $0 }
                guard others.isEmpty else {
                    throw ValidationError(
                        "--paired decides timing rows pair by pair: \(others.joined(separator: ", ")) not with it")
                }
                return
            }
            guard files.count == 2 else {
                throw ValidationError(
                    "give two files, BASELINE CURRENT (or --paired A1 B1 A2 B2 …); got \(files.count)")
            }
            if looks != nil { throw ValidationError("--looks is for --paired") }
        }

        func run() throws {
            if paired {
                return try Paired.compare(files: files, looks: looks ?? 1, minEffect: effect.minEffect, format: format)
            }
            let (baseline, current) = (self.files[0], self.files[1])
            let files = try [baseline, current].map(Inputs.results)
            try Comparison.checkToolchains(baseline: files[0], current: files[1])
            let machineID = files[1].machine.machineID
            var path = noise
            // the default: beside the current file, else this checkout's profile of its machine kind
            let lookup = Inputs.defaultNoiseProfile(
                besides: Inputs.url(current).deletingLastPathComponent().path, machineID: machineID)
            if path == nil, !noNoise, let found = lookup.found {
                path = found
                printError("stepbench compare: drift allowances from \(found) (--no-noise to leave them out)\n")
            }
            let profile = try noNoise ? nil : path.map(Inputs.noiseProfile)
            if profile == nil, !noNoise {
                printError(
                    "stepbench compare: no noise profile (none given, none at \(lookup.looked.joined(separator: " or "))): no timing row can be called a regression, only exact counts. Make one from 3 or more A/A runs of the same build: `stepbench noise RUN.json… --output noise.json`, then `compare --noise noise.json`\n"
                )
            }
            if let profile, profile.machineId != machineID {
                printError(
                    "stepbench compare: warning: the noise profile is of machine kind \(profile.machineId), the current file of \(machineID); its drift allowances may not fit\n"
                )
            }
            let all = Comparison.compare(
                baseline: files[0], current: files[1], minEffect: effect.minEffect, noise: profile)
            let comparison = exactOnly ? all.exactOnly : all
            print(try comparison.render(format), terminator: "")
            if let flameGraphs {
                try StepBench.writeFlameGraphs(files[0], files[1], into: flameGraphs, command: "compare")
            }
            if !(exactOnly ? comparison.exactRegressions : comparison.regressions).isEmpty {
                throw ExitStatus.slower.code
            }
        }
    }
}

extension StepBench {
    /// Each moved row's differential flame graph, written atomically into `folder` (made when
    /// missing); their paths on stderr.
    static func writeFlameGraphs(
        _ baseline: ResultsFile, _ current: ResultsFile, into folder: String, command: String
    ) throws {
        let graphs = Comparison.flameGraphs(baseline: baseline, current: current)
        if graphs.isEmpty {
            printError(
                "stepbench \(command): no flame graph written: no row moved, or the files hold no whole profiles (`stepbench profile` and `gate measure` keep them)\n"
            )
            return
        }
        let url = URL(fileURLWithPath: folder)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for (file, graph) in graphs {
                try Data(graph.svg().utf8).write(to: url.appendingPathComponent(file), options: .atomic)
                printError("stepbench \(command): flame graph \(url.appendingPathComponent(file).path)\n")
            }
        } catch {
            throw ResultsError(
                .unwritable,
                "cannot write the flame graphs into \(folder): \(error.localizedDescription); give a folder you can write"
            )
        }
    }
}
