import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "document",
            abstract:
                "Print results files as one JSON document, read as every command reads them: what scripts/report draws.",
            discussion:
                "Each file is checked (its schema and shape; an error names the file and the problem). Several are combined by `merge --combine --across-builds`'s rule, the one compare and the gate use: each row, profile and path measured by one file only (two that measured the same are refused, naming both); the machine, configuration and time are the first file's with rows. The document holds the combined file (`results`), the catalog it was written with (`catalog`), its machine kind (`machineID`), each file's rankings (`rankings`, as `stepbench show ranking` makes them: one file's rounds are never paired with another's) each peer's split into its library (its direct row) and its bridge to the stepper contract (`bridges`), the fewest exact instructions of each profiled scenario (`fewest`: decided unless another design counts as few) the design targets of docs/METHOD.md, each decided (`targets`), and every row below its own floor with its cause (`belowFloor`: a harness defect, counts the floor exceeds it by, an interval that reaches the floor, else unexplained and not decided)."
        )

        @Argument(
            help:
                "Results and profile files (stepbench run, stepbench profile) of one machine kind; a folder: its latest.json."
        )
        var files: [String]

        struct Document: Encodable {
            /// The files read, as given (a folder: its latest.json).
            var files: [String]
            var machineID: String
            var catalog: Catalog
            var results: ResultsFile
            var rankings: [Ranking]
            var bridges: [ResultsFile.BridgeSplit]
            /// Each peer's direct row beside its library in a plain program, and the parts of
            /// their difference (``ResultsFile/PlainSplit``).
            var plains: [ResultsFile.PlainSplit]
            /// The fewest exact instructions of each profiled scenario, per field.
            var fewest: [FewestCount]
            /// The design targets of "What the API costs", decided.
            var targets: [DesignTarget]
            /// Every row below its own floor, with its cause (``BelowFloor``).
            var belowFloor: [BelowFloor]
            /// The smallest count per element a verdict names (``BelowFloor/countNamed``).
            var countNamed: Double
            /// The answer to each question of the run (``Verdict``): a winner, an equivalence
            /// within the margin, or open; the per-element question with its exact counts.
            var verdicts: [Verdict]
            /// The equivalence margin the verdicts use (``Ranking/equivalenceMargin``).
            var equivalenceMargin: Double
            /// What else ran while the run timed (``Quietness``), with its verdict.
            var quietness: Quietness?
            var disturbed: Bool?
            /// The cores' worth of CPU other processes kept busy while the run timed.
            var otherCores: Double?
        }

        func run() throws {
            print(String(decoding: try JSONOutput.encode(Self.document(files)), as: UTF8.self))
        }

        /// The document of `files` (a folder: its latest.json), and each file as read.
        static func document(_ files: [String]) throws -> Document {
            try read(files).document
        }

        /// The document of `files` and the files it was made of, as read.
        static func read(_ files: [String]) throws -> (document: Document, inputs: [ResultsFile]) {
            let urls = files.map(Inputs.url)
            let inputs = try files.map(Inputs.results)
            var results = try Inputs.combined(inputs, names: files, acrossBuilds: true)
            // The whole call profiles are tens of megabytes: the document carries their summary.
            for i in (results.profiles ?? []).indices {
                results.profiles![i].callProfile = results.profiles![i].callProfile?.summary()
            }
            for i in (results.paths ?? []).indices {
                results.paths![i].callProfile = results.paths![i].callProfile?.summary()
            }
            let document = Document(
                files: urls.map(\.relativePath), machineID: results.machine.machineID, catalog: results.writtenWith,
                results: results,
                rankings: inputs.flatMap(Ranking.rank), bridges: results.bridgeSplits, plains: results.plainSplits,
                fewest: FewestCount.rank(results), targets: DesignTarget.evaluate(results),
                belowFloor: BelowFloor.find(results), countNamed: BelowFloor.countNamed,
                verdicts: Verdict.decide(
                    results, rankings: inputs.first { !$0.rows.isEmpty }.map(Ranking.rank) ?? [],
                    profiles: results.profiles),
                equivalenceMargin: Ranking.equivalenceMargin, quietness: results.quietness,
                disturbed: results.quietness?.disturbed, otherCores: results.quietness?.otherCores)
            return (document, inputs)
        }
    }
}
