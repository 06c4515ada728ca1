import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Merge results files into one: the processes of one configuration (each a repetition of its medians), or with --combine different runs and profiles side by side.",
            discussion:
                "scripts/abtest merges each build's interleaved processes this way before comparing them; scripts/regress combines its runs and profile into the gate's current file."
        )

        @Argument(help: "Results files: one per process; with --combine, any runs and profiles of one build.")
        var files: [String]

        @Option(help: "Where to write the merged file (JSON, written atomically).")
        var output: String

        @Flag(
            help:
                "Combine the files' rows and profiles as they were measured (each row and profile in one file only), instead of merging processes into repetitions."
        )
        var combine = false

        @Flag(
            help:
                "With --combine: files of different builds too (scripts/report combines its inputs this way: a profile may come from another commit)."
        )
        var acrossBuilds = false

        func validate() throws {
            if acrossBuilds && !combine { throw ValidationError("--across-builds goes with --combine") }
        }

        func run() throws {
            let inputs = try files.map(Inputs.results)
            let merged =
                try combine
                ? ResultsFile.combined(inputs, names: files, acrossBuilds: acrossBuilds)
                : ResultsFile.mergedPerProcess(inputs)
            try merged.write(to: URL(fileURLWithPath: output))
            let what =
                combine
                ? "\(merged.rows.count) rows and \(merged.profiles?.count ?? 0) profiles of \(inputs.count) files"
                : merged.aggregation ?? "merged"
            print("\(what) written to \(output)")
        }
    }
}
