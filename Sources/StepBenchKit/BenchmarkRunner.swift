import Foundation
import Stepping
import StepBenchScenarios

/// Runs a configuration: a warm-up of every combination, then repetitions interleaved across
/// combinations (A B C … A B C …) so that drift on a shared machine hits all of them alike.
public struct BenchmarkRunner {
    public struct Combination: Equatable, Sendable {
        public var scenario: ScenarioKind
        public var design: SteppingDesign?
        public var threads: Int
        public var elements: Int
        public var label: String { "\(scenario.rawValue) \(design?.rawValue ?? "floor") ×\(threads)" }
    }

    public let configuration: RunConfiguration
    /// Called with progress lines (stderr in the tool).
    public var progress: (String) -> Void = { _ in }

    public init(configuration: RunConfiguration) {
        self.configuration = configuration
        AllocationCounter.install()
    }

    public var combinations: [Combination] {
        var result: [Combination] = []
        for scenario in configuration.scenarios {
            let elements = configuration.elements ?? scenario.elements(configuration.profile)
            for threads in scenario.threadCounts(requested: configuration.threads) {
                if scenario.isFloor {
                    result.append(Combination(scenario: scenario, design: nil, threads: threads, elements: elements))
                } else {
                    for design in configuration.designs {
                        result.append(Combination(scenario: scenario, design: design, threads: threads, elements: elements))
                    }
                }
            }
        }
        return result
    }

    public func run() -> ResultsFile {
        let combos = combinations
        let reps = configuration.effectiveRepetitions
        var raw = [[RepetitionResult]](repeating: [], count: combos.count)
        var failures = [String?](repeating: nil, count: combos.count)
        let started = monotonicNanoseconds()
        let total = combos.count * (reps + (configuration.warmup ? 1 : 0))
        var done = 0

        func step(_ i: Int, elements: Int, record: Bool, phase: String) {
            done += 1
            let c = combos[i]
            let elapsed = Double(monotonicNanoseconds() - started) / 1e9
            let eta = done > 1 ? elapsed / Double(done - 1) * Double(total - done + 1) : 0
            progress("[\(done)/\(total)] \(phase) \(c.label) — \(Self.duration(elapsed)) elapsed, ETA \(Self.duration(eta))")
            guard failures[i] == nil else { return }
            do {
                let r = try c.scenario.run(design: c.design, threads: c.threads, elements: elements)
                if record { raw[i].append(r) }
            } catch {
                failures[i] = "\(error)"
                progress("FAILED \(c.label): \(error)")
            }
        }

        if configuration.warmup {
            for i in combos.indices { step(i, elements: max(1, combos[i].elements / 10), record: false, phase: "warm-up") }
        }
        for r in 0..<reps {
            for i in combos.indices { step(i, elements: combos[i].elements, record: true, phase: "rep \(r + 1)/\(reps)") }
        }

        let rows = combos.indices.map { i -> ResultsFile.Row in
            let c = combos[i]
            let ok = failures[i] == nil && !raw[i].isEmpty
            return ResultsFile.Row(scenario: c.scenario, design: c.design?.rawValue ?? "floor", threads: c.threads,
                                   elements: c.elements, status: ok ? "ok" : "failed", failure: failures[i],
                                   repetitions: raw[i], summary: ok ? ResultsFile.Summary(raw[i]) : nil)
        }
        var file = ResultsFile(
            schema: ResultsFile.currentSchema,
            createdAt: ISO8601DateFormatter().string(from: Date()),
            machine: MachineFingerprint.current(),
            configuration: .init(profile: configuration.profile, repetitions: reps, warmup: configuration.warmup,
                                 threads: configuration.threads, elementsOverride: configuration.elements,
                                 handoff: "spin-yield (spin \(SpinSlot<Int>.spinLimit) polls, then sched_yield)"),
            rows: rows, peakRSSBytes: ResourceUsage.now().peakRSSBytes)
        file.computeRatios()
        return file
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 60 ? String(format: "%.0fs", seconds) : String(format: "%dm%02ds", Int(seconds) / 60, Int(seconds) % 60)
    }
}
