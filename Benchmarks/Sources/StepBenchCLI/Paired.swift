import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    /// The arguments of the old `stepbench paired` (now `compare --paired`, ``PairedRenamed``),
    /// and the paired comparison both run. It is no command of the tree: the old name's help and
    /// configuration are ``PairedRenamed``'s.
    struct Paired: ParsableCommand {
        @Argument(help: "Results files (a folder: its latest.json), A1 B1 A2 B2 … (at least 3 pairs).")
        var files: [String]

        @Option(help: "The most looks the session may take (each look is decided at 1%/looks).")
        var looks = 1

        @OptionGroup var effect: MinEffectOption

        @Option(help: "The output's format.")
        var format: ComparisonFormat = .text

        func validate() throws { try Self.check(files: files, looks: looks) }

        func run() throws { try Self.compare(files: files, looks: looks, minEffect: effect.minEffect, format: format) }

        /// The files come pair by pair, at least 3 pairs, and a session looks at least once.
        static func check(files: [String], looks: Int) throws {
            guard files.count % 2 == 0, files.count >= 6 else {
                throw ValidationError(
                    "give the files pair by pair, A1 B1 A2 B2 …, at least 3 pairs; got \(files.count) file(s)")
            }
            guard looks >= 1 else { throw ValidationError("--looks must be at least 1, got \(looks)") }
        }

        /// Reads the pairs, prints the comparison, and throws its status: 2 on a regression, 5
        /// while a row is undecided.
        static func compare(files: [String], looks: Int, minEffect: Double, format: ComparisonFormat) throws {
            let read = try files.map(Inputs.results)
            let a = stride(from: 0, to: read.count, by: 2).map { read[$0] }
            let b = stride(from: 1, to: read.count, by: 2).map { read[$0] }
            let comparison = try Comparison.paired(a: a, b: b, looks: looks, minEffect: minEffect)
            print(try comparison.render(format), terminator: "")
            if !comparison.regressions.isEmpty { throw ExitStatus.slower.code }
            if !comparison.isDecided { throw ExitStatus.undecided.code }
        }
    }
}
