import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Agree: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .slower: "a disagreement (the table names it)",
            .verificationFailed: "a row of RESULTS failed its verification (there is no count to agree on)",
        ]
        static let configuration = CommandConfiguration(
            abstract:
                "Check that package-benchmark's malloc counts agree with stepbench's jemalloc counts (a step of the CI gate).",
            discussion:
                "For every benchmark of the package-benchmark suite whose allocation count the code fixes (this build's catalog: `stepbench list --format json`'s benchmarks), its mallocCountTotal per iteration (BENCH_DIR/SteppingBenchmarks.<name>.p90.json, from `swift package --package-path Benchmarks benchmark thresholds update --path BENCH_DIR`) over the elements an iteration counts must match stepbench's allocations per element in RESULTS (read as every command reads them) at the benchmark's threads and elements, within the catalog's tolerance per element. "
                + ExitStatus.sentence(exitStatuses)
        )

        @Argument(help: "The folder of package-benchmark's p90 threshold files.")
        var benchDirectory: String

        @Argument(help: "Results files of stepbench run at the suite's elements (a folder: its latest.json).")
        var results: [String]

        @Option(help: "text or json.")
        var format: ListFormat = .text

        func validate() throws {
            guard !results.isEmpty else { throw ValidationError("name at least one results file after BENCH_DIR") }
        }

        func run() throws {
            let combined = try Inputs.combined(results, acrossBuilds: true)
            let agreement = try MallocAgreement.check(
                counts: try MallocAgreement.benchmarkCounts(in: URL(fileURLWithPath: benchDirectory)),
                rows: combined.rows, benchmarks: Catalog.current.benchmarks,
                source: results.joined(separator: ", "))
            switch format {
            case .json: print(String(decoding: try JSONOutput.encode(agreement), as: UTF8.self))
            case .text: print(agreement.text, terminator: "")
            }
            if !agreement.agrees { throw ExitStatus.slower.code }
        }
    }
}
