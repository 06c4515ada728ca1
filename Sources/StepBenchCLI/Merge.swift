import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Merge results files of separate processes (one configuration) into one whose repetitions are the processes (each its medians).",
            discussion: "scripts/abtest merges each build's interleaved processes this way before comparing them.")

        @Argument(help: "Results files, one per process.")
        var runs: [String]

        @Option(help: "Where to write the merged file (JSON, written atomically).")
        var output: String

        func run() throws {
            let merged = try ResultsFile.mergedPerProcess(runs.map { try ResultsFile.read(resultsURL($0)) })
            try merged.write(to: URL(fileURLWithPath: output))
            print("\(merged.aggregation ?? "merged") written to \(output)")
        }
    }
}
