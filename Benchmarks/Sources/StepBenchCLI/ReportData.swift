import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    /// `stepbench show report`: everything scripts/report draws, in one document, so that the
    /// report asks the tool once and reads no results file itself.
    struct ReportData: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "report",
            abstract: "Everything scripts/report draws, as one JSON document (schema stepbench-report/1).",
            discussion: """
                The document holds: the tool's catalog (`catalog`, as `stepbench list --format json` \
                prints it); the files' document (`document`, as `stepbench show document` prints it) and \
                each file's machine (`machines`); the comparison the report's "did anything get slower?" \
                draws (`comparison`: the baseline given, else the previous run of the first file's folder \
                of the same settings, newest first among those made on a clean tree at an ancestor of this \
                run's commit; each side's files combined as `merge --combine --across-builds` combines \
                them; compared as `compare --format json` compares them, with the folder's noise.json \
                when there is one); the conformance verdict beside the first file (`conformance`, as \
                `conform --from conformance.json --format json` prints it); and the folder's history \
                (`history`, as `stepbench history series` prints it, or `historyError`, what it said).
                """)

        @Argument(
            help:
                "Results and profile files (stepbench run, stepbench profile) of one machine kind; a folder: its latest.json."
        )
        var files: [String]

        @Option(help: "Results file to compare against (default: the previous run of the first file's folder).")
        var baseline: String?

        @Option(
            help:
                "The git repository that knows the runs' commits, for choosing the previous run (default: the first file's folder)."
        )
        var repository: String?

        static let schema = "stepbench-report/1"

        func run() throws {
            print(try Self.document(files: files, baseline: baseline, repository: repository))
        }

        /// The document, each part encoded as the command that prints it alone encodes it.
        static func document(files: [String], baseline: String?, repository: String?) throws -> String {
            let (document, inputs) = try Read.read(files)
            let folder = URL(fileURLWithPath: document.files[0]).standardized.deletingLastPathComponent().path
            var parts: [(String, String)] = [
                ("schema", try JSONOutput.string(schema)),
                ("catalog", try JSONOutput.string(Catalog.current)),
                ("document", try JSONOutput.string(document)),
                ("machines", try JSONOutput.string(inputs.map(\.machine))),
            ]
            let against: (files: [String], previous: Bool)? =
                if let baseline { ([baseline], false) } else {
                    try Inputs.previousRun(
                        in: folder, besides: document.files, of: document.results,
                        head: inputs[0].machine.gitCommit, repository: repository ?? folder
                    ).map { ($0, true) }
                }
            if let against {
                parts.append(("against", try JSONOutput.string(against.files)))
                parts.append(("againstPrevious", try JSONOutput.string(against.previous)))
                parts.append(("comparison", try comparison(of: against.files, with: inputs, names: files, in: folder)))
            }
            do {
                if let verdict = try Inputs.conformanceVerdict(besides: folder) {
                    parts.append(("conformance", try verdict.marked().json()))
                }
            } catch {
                throw ResultsError(
                    ResultsError.kind(of: error, otherwise: .malformed),
                    "the conformance verdict beside the results: \(StepBench.message(for: error))")
            }
            do {
                let shown = relativePath(folder)
                parts.append(("history", try JSONOutput.string(SeriesFile.make(folder: shown, noise: .folderDefault))))
            } catch {
                parts.append(("historyError", try JSONOutput.string(StepBench.message(for: error))))
            }
            let members = try parts.map { "\(try JSONOutput.string($0.0)): \($0.1)" }
            return "{\n" + members.joined(separator: ",\n") + "\n}"
        }

        /// `compare --format json` of the files `against` (combined) with this run's `inputs`
        /// (combined), with the folder's noise profile when there is one.
        static func comparison(
            of against: [String], with inputs: [ResultsFile], names: [String], in folder: String
        ) throws -> String {
            do {
                let old = try Inputs.combined(against, acrossBuilds: true)
                let new = try Inputs.combined(inputs, names: names, acrossBuilds: true)
                try Comparison.checkToolchains(baseline: old, current: new)
                let profile = try Inputs.defaultNoiseProfile(besides: folder).found.map(Inputs.noiseProfile)
                return try Comparison.compare(baseline: old, current: new, noise: profile).render(.json)
            } catch {
                throw ResultsError(
                    ResultsError.kind(of: error, otherwise: .malformed),
                    "stepbench compare: \(StepBench.message(for: error))")
            }
        }

        /// `path` (absolute) relative to the working directory, as Python's os.path.relpath
        /// writes it: the history names its folder so.
        static func relativePath(_ path: String) -> String {
            let target = URL(fileURLWithPath: path).standardized.pathComponents
            let base = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardized.pathComponents
            var common = 0
            while common < min(target.count, base.count), target[common] == base[common] { common += 1 }
            let parts = Array(repeating: "..", count: base.count - common) + target[common...]
            return parts.isEmpty ? "." : parts.joined(separator: "/")
        }
    }
}
