// The package-benchmark suite: one benchmark per (scenario, design), built on the very
// scenarios `stepbench run` measures (StepBenchScenarios), so the two tools measure the same
// code. package-benchmark counts allocations with malloc-interposer; this binary does not link
// jemalloc. Each scenario's own `Meter` opens and closes package-benchmark's measurement
// (`startMeasurement()`/`stopMeasurement()`), so both tools count allocations over exactly the
// same window, and `stepbench gate agree` (run by scripts/regress) checks that they agree.
//
//   swift package benchmark                                   run and print
//   swift package benchmark thresholds check --path Thresholds/<machine-id>
//   swift package --allow-writing-to-package-directory benchmark thresholds update --path Thresholds/<machine-id>
//
// Names are `<scenario>_<design>` (floors: `<scenario>`), with no spaces or `/` (threshold
// files are named after them). Scenarios with racing threads run at 2 threads. Elements,
// threads and names come from ScenarioKind, which `stepbench list --format json` publishes.
import Benchmark
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// The tolerances `thresholds check` applies at p90 against the committed Thresholds/. Only
/// what the code alone decides is gated: mallocCountTotal of the benchmarks whose allocation
/// count is exact, at most `ScenarioKind.allocationTolerance(for:)` per element apart (the
/// same tolerance `stepbench compare` allows: 0.01 per element, 0.5 per round in cancel-race),
/// so one extra allocation per element (per round) fails. Wall clock,
/// and the counts that follow thread timing, are measured and printed but never gated: on
/// shared VMs they follow the neighbours and the schedule, so gating them fails unchanged trees.
/// `stepbench gate thresholds` (ThresholdPolicy) keeps the committed threshold files to exactly this.
func thresholds(_ scenario: ScenarioKind, _ subject: Subject) -> [BenchmarkMetric: BenchmarkThresholds] {
    guard let tolerance = scenario.allocationTolerance(for: subject) else { return [:] }
    let allowed = max(1, Int(tolerance * Double(scenario.suiteElements)))
    return [.mallocCountTotal: BenchmarkThresholds(absolute: [.p90: allowed])]
}

/// `Benchmark` is used from the scenario's own thread only (Meter runs where the scenario runs).
struct BenchmarkHandle: @unchecked Sendable { let benchmark: Benchmark }

let benchmarks: @Sendable () -> Void = {
    for scenario in ScenarioKind.allCases {
        for subject in scenario.subjects {
            let name = scenario.benchmarkName(for: subject)
            let configuration = Benchmark.Configuration(
                metrics: [.wallClock, .mallocCountTotal],
                warmupIterations: 2,
                maxDuration: .seconds(1),
                maxIterations: 200,
                thresholds: thresholds(scenario, subject))
            Benchmark(name, configuration: configuration) { benchmark in
                let handle = BenchmarkHandle(benchmark: benchmark)
                MeterHooks.install(
                    MeterHooks(
                        countAllocations: { 0 },  // malloc-interposer counts them for package-benchmark
                        didStart: { handle.benchmark.startMeasurement() },
                        willStop: { handle.benchmark.stopMeasurement() }))
                do {
                    _ = try scenario.run(
                        subject, threads: scenario.suiteThreads, elements: scenario.suiteElements)
                } catch {
                    benchmark.error("\(name): \(error)")
                }
            }
        }
    }
}
