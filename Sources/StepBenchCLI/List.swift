import ArgumentParser
import StepBenchKit
import StepBenchScenarios
import Stepping

extension StepBench {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List designs, scenarios and metrics.")

        @Option(
            help:
                "text, or json: the catalog scripts read (designs, scenarios, floors, element counts, the package-benchmark suite, which allocation counts are exact)."
        )
        var format: ListFormat = .text

        func run() throws {
            if format == .json {
                print(try JSONOutput.string(Catalog.current))
                return
            }
            print("designs:")
            for d in SteppingDesign.allCases { print("  \(d.rawValue)\(d == .default ? " (default)" : "")") }
            print("\nscenarios (elements per repetition: quick / full; threads):")
            for s in ScenarioKind.allCases {
                let threads = s.threadCounts(requested: [1, 2, 4]).map(String.init).joined(separator: ",")
                print(
                    "  \(s.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)) \(s.elements(.quick)) / \(s.elements(.full)); threads \(threads)\n      \(s.summary)"
                )
            }
            print("\npaths (`stepbench profile`: exact counts per event; * where the counts are not exact):")
            let catalog = Catalog.current
            for path in catalog.paths {
                let subjects = path.subjects.map { path.exact.contains($0) ? $0 : $0 + "*" }
                print("  \(path.name) (per \(path.event)): \(subjects.joined(separator: ", "))\n      \(path.summary)")
            }
            print(
                """

                metrics (per scenario, design, threads; median and 95% bootstrap CI over repetitions):
                  ns/element, elements/s       wall time of the measured phase
                  allocations/element          exact, jemalloc statistics (tcache off)
                  cpu ns/element               getrusage user+system, all threads
                  latency p50/p90/p99/p99.9/max  HdrHistogram, where per-event latency is meaningful
                  ×seed, ×floor                ratio of median ns/element (async-step: of p50 latency)
                  peak RSS                     per run
                """)
        }
    }
}
