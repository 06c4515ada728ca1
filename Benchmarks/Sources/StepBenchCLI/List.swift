import ArgumentParser
import StepBenchKit
import StepBenchScenarios
@_spi(Measurement) import Stepping

extension StepBench {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List designs, scenarios and metrics.")

        @Option(
            help:
                "text, or json: the catalog scripts read (designs, scenarios, floors, element counts, the package-benchmark suite, which allocation counts are exact)."
        )
        var format: ListFormat = .text

        @Option(
            help:
                "A results file: the catalog it was written with (with --format json); for a file older than the catalog, today's with the floors of its time."
        )
        var of: String?

        func validate() throws {
            if of != nil && format != .json { throw ValidationError("--of needs --format json") }
        }

        func run() throws {
            if format == .json {
                print(
                    try JSONOutput.string(
                        of.map { try Inputs.results($0).writtenWith } ?? Catalog.current))
                return
            }
            print(Self.text, terminator: "")
        }

        /// The text listing: every name whole, as `--design`, `--scenario` and `--path` take it.
        static var text: String {
            var lines = ["designs:"]
            for d in SteppingDesign.described { lines.append("  \(d.rawValue)\(d == .default ? " (default)" : "")") }
            lines.append("\nscenarios (elements per repetition: quick / full; threads):")
            let width = ScenarioKind.allCases.map(\.rawValue.count).max() ?? 0
            for s in ScenarioKind.allCases {
                let threads = s.threadCounts(requested: [1, 2, 4]).map(String.init).joined(separator: ",")
                lines.append(
                    "  \(s.rawValue.padding(toLength: width, withPad: " ", startingAt: 0))  \(s.elements(.quick)) / \(s.elements(.full)); threads \(threads)\n      \(s.summary)"
                )
            }
            lines.append("\npaths (`stepbench profile`: exact counts per event; * where the counts are not exact):")
            for path in Catalog.current.paths {
                let subjects = path.subjects.map { path.exact.contains($0) ? $0 : $0 + "*" }
                lines.append(
                    "  \(path.name) (per \(path.event)): \(subjects.joined(separator: ", "))\n      \(path.summary)")
            }
            lines.append(
                """

                metrics (per scenario, design, threads; median and 95% bootstrap CI over repetitions):
                  ns/element, elements/s       wall time of the measured phase
                  allocations/element          exact, jemalloc statistics (tcache off)
                  cpu ns/element               getrusage user+system, all threads
                  latency p50/p90/p99/p99.9/max  HdrHistogram, where per-event latency is meaningful
                  ×seed, ×floor                ratio of median ns/element (async-step: of p50 latency)
                  peak RSS                     per run
                """)
            return lines.joined(separator: "\n") + "\n"
        }
    }
}
