import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Detect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Change points of series given as JSON: the search `stepbench history series` runs on a folder's.",
            discussion: """
                The input (a file, or - for standard input): {"minEffect": 0.05, "sigmas": 4, "series": \
                [{"key": "sync-step|atomic|1|ns_per_element_vs_floor", "exact": false, "driftSD": 0.01, \
                "tolerance": null, "values": [...], "logs": [[...], ...]}]}; `sigmas` is optional (the \
                method's), `driftSD` null for no drift estimate, `logs` each run's repetitions as natural \
                logs (timing series), `tolerance` {"relative": x} or {"absolute": x} (exact series). The \
                output: the method's constants and one outcome per series, in order (status, sampling σ, \
                change points with their p-values). For tests and tools that build series of their own.
                """)

        @Argument(help: "The series as JSON, or - for standard input.")
        var input: String

        struct Answer: Encodable {
            var method: ChangePoints.Method
            var outcomes: [ChangePoints.Outcome]
        }

        func run() throws {
            let data: Data
            do {
                data =
                    input == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: input))
            } catch {
                throw ResultsError(.unreadable, "\(input): cannot read it (\(error.localizedDescription))")
            }
            let request: ChangePoints.Request
            do { request = try ChangePoints.Request(json: data) } catch {
                throw ResultsError(
                    .wrongKind, "\(input): not a detect request (\(error)); see `stepbench help history detect`")
            }
            var method = ChangePoints.Method()
            if let sigmas = request.sigmas { method.sigmas = sigmas }
            let outcomes = request.series.map { s in
                ChangePoints.detect(
                    key: s.key, exact: s.exact, relative: s.relative, absolute: s.absolute, driftSD: s.driftSD,
                    values: s.values, logs: s.logs ?? [], minEffect: request.minEffect, method: method)
            }
            print(try JSONOutput.string(Answer(method: method, outcomes: outcomes)))
        }
    }
}
