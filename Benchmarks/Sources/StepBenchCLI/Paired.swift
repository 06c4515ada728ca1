import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Paired: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare A and B processes that ran in adjacent pairs: each row's primary metric, pair by pair.",
            discussion:
                "Give the files pair by pair: A1 B1 A2 B2 … (A the baseline). Each row is decided on the Student-t interval of the mean log ratio over the pairs, rows sharing the family-wise 1% by Holm, divided by --looks when a session looks more than once. Exit status: 0 no regression and every decided row decided, 2 regression, 5 some row still inconclusive (more pairs could decide it), 1 usage error."
        )

        @Argument(help: "Results files (a folder: its latest.json), A1 B1 A2 B2 … (at least 3 pairs).")
        var files: [String]

        @Option(help: "The most looks the session may take (each look is decided at 1%/looks).")
        var looks = 1

        @OptionGroup var effect: MinEffectOption

        @Option(help: "The output's format.")
        var format: ComparisonFormat = .text

        func validate() throws {
            guard files.count % 2 == 0, files.count >= 6 else {
                throw ValidationError(
                    "give the files pair by pair, A1 B1 A2 B2 …, at least 3 pairs; got \(files.count) file(s)")
            }
            guard looks >= 1 else { throw ValidationError("--looks must be at least 1, got \(looks)") }
        }

        func run() throws {
            let read = try files.map { try ResultsFile.read(resultsURL($0)) }
            let a = stride(from: 0, to: read.count, by: 2).map { read[$0] }
            let b = stride(from: 1, to: read.count, by: 2).map { read[$0] }
            let comparison = try Comparison.paired(a: a, b: b, looks: looks, minEffect: effect.minEffect)
            print(try comparison.render(format), terminator: "")
            if !comparison.regressions.isEmpty { throw ExitStatus.slower.code }
            if !comparison.isDecided { throw ExitStatus.undecided.code }
        }
    }
}
