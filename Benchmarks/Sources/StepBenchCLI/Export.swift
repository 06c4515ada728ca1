import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export a results file as CSV, github-action-benchmark JSON or InfluxDB line protocol.")

        @Option(help: "The format.")
        var format: ExportFormat

        @Option(help: "Write here (atomically) instead of stdout.")
        var output: String?

        @Argument(help: "A stepbench results file (schema stepbench/2 or /1), or a folder holding latest.json.")
        var results: String

        func validate() throws {
            try StepBench.validating {
                if let output { try RunConfiguration.checkWritable(URL(fileURLWithPath: output)) }
            }
        }

        func run() throws {
            let file = try Inputs.results(results)
            let text: String
            do { text = try Exporter.export(file, as: format) } catch let e as ResultsError {
                throw ResultsError(e.kind, "\(results): \(e.description)")
            }
            guard let output else {
                print(text, terminator: "")
                return
            }
            try ResultsFile.writeAtomically(Data(text.utf8), to: URL(fileURLWithPath: output))
        }
    }
}
