import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance

/// Runs a configuration: a warm-up of every combination, then rounds of one repetition of each,
/// so that drift on a shared machine hits all of them alike. Within a round the order is
/// shuffled (from a seed the results file records), but each design runs in one block with its
/// scenario's floor (the floor at a random place in the block), so a design and the floor it is
/// divided by are measured seconds apart, not minutes; no combination always runs first or
/// always follows the same neighbour.
public struct BenchmarkRunner {
    public struct Combination: Equatable, Sendable {
        public var scenario: ScenarioKind
        /// `.floor` for a floor scenario, else a design.
        public var subject: Subject
        public var threads: Int
        public var elements: Int
        public var label: String { "\(scenario.rawValue) \(subject) ×\(threads)" }
    }

    public let configuration: RunConfiguration
    /// Called with progress lines (stderr in the tool).
    public var progress: (String) -> Void = { _ in }
    /// Called with a combination's index (in ``combinations``) before each repetition of it
    /// runs: a measuring child's journal, which tells its parent where it crashed or hung.
    public var journal: (Int) -> Void = { _ in }
    /// Called once every combination has run, before the file is made (the machine's
    /// fingerprint asks git and swift): the journal's last line, so that a fault after it is
    /// not charged to the last combination.
    public var finished: () -> Void = {}
    /// Combinations not to run, as an earlier process of the same pass left them (a crash, a
    /// hang): their rows carry the fault's status and failure.
    public var faults: [PassRequest.Fault] = []

    public init(configuration: RunConfiguration) {
        self.configuration = configuration
        AllocationCounter.install()
        ThreadedProcess.ensure()
    }

    public var combinations: [Combination] { Self.combinations(of: configuration) }

    /// The combinations `configuration` runs, in the order of its rows.
    public static func combinations(of configuration: RunConfiguration) -> [Combination] {
        var result: [Combination] = []
        for scenario in configuration.scenarios {
            let timed = configuration.elements ?? scenario.elements(configuration.preset)
            for threads in scenario.threadCounts(requested: configuration.threads) {
                for subject in scenario.subjects(among: configuration.designs) {
                    result.append(Combination(scenario: scenario, subject: subject, threads: threads, elements: timed))
                }
            }
        }
        if let sized = configuration.sizedElements, sized.count == result.count {
            for i in result.indices { result[i].elements = sized[i] }
        }
        if configuration.countsOnly {
            for i in result.indices { result[i].elements = result[i].scenario.countingElements(result[i].elements) }
        }
        return result
    }

    /// Blocks of combination indices: each non-floor scenario × threads with its floor (when the
    /// floor is selected too), and every floor not claimed by a block on its own.
    public var blocks: [[Int]] {
        let combos = combinations
        var claimed = Set<Int>()
        var result: [[Int]] = []
        for (i, c) in combos.enumerated() where !c.scenario.isFloor && !claimed.contains(i) {
            var block = combos.indices.filter {
                !combos[$0].scenario.isFloor && combos[$0].scenario == c.scenario && combos[$0].threads == c.threads
            }
            if let floor = combos.indices.first(where: {
                combos[$0].scenario == c.scenario.floor && combos[$0].threads == c.threads
            }) {
                block.append(floor)
            }
            claimed.formUnion(block)
            result.append(block)
        }
        for i in combos.indices where !claimed.contains(i) { result.append([i]) }
        return result
    }

    /// The order of round `round`: blocks shuffled, and each block's members shuffled.
    public static func order(blocks: [[Int]], seed: UInt64, round: Int) -> [Int] {
        var rng = SplitMix64(seed: seed &+ UInt64(round) &* 0x9E37_79B9_7F4A_7C15)
        return blocks.map { $0.shuffled(using: &rng) }.shuffled(using: &rng).flatMap { $0 }
    }

    /// The elements a repetition of a combination runs when its timed warm-up, `warm` elements
    /// in `seconds`, projects a repetition of `elements` over `budget` seconds: halved until the
    /// projection fits, at most 5 times (1/32) and to no fewer than 8; else `elements`.
    static func sized(_ elements: Int, warm: Int, seconds: Double, budget: Double) -> Int {
        var projected = seconds * Double(elements) / Double(max(1, warm))
        var sized = elements
        for _ in 0..<5 where projected > budget && sized / 2 >= 8 {
            sized /= 2
            projected /= 2
        }
        return sized
    }

    public func run() -> ResultsFile {
        var combos = combinations
        let budget = configuration.effectiveRepetitionBudget
        let sizing = configuration.sizesAtWarmup
        let blocks = blocks
        let seed = configuration.orderSeed ?? UInt64.random(in: 1...UInt64.max)
        let reps = configuration.effectiveRepetitions
        var raw = [[RepetitionResult]](repeating: [], count: combos.count)
        var failures = [String?](repeating: nil, count: combos.count)
        var statuses = [ResultsFile.Status?](repeating: nil, count: combos.count)
        for (i, c) in combos.enumerated() {
            guard let design = c.subject.design, let issue = c.scenario.exclusion(of: design) else { continue }
            failures[i] = "not run: \(design) declares rule \(issue.rule) broken (\(issue.reason))"
            statuses[i] = .excluded
        }
        for fault in faults where combos.indices.contains(fault.combination) {
            failures[fault.combination] = fault.failure
            statuses[fault.combination] = fault.status
        }
        let started = monotonicNanoseconds()
        let timedWarmUps = sizing ? combos.filter(\.scenario.sizesToBudget).count : 0
        let total = combos.count * (reps + (configuration.warmup ? 1 : 0)) + timedWarmUps
        var done = 0

        func step(_ i: Int, elements: Int, record: Bool, phase: String, size: Bool = false) {
            done += 1
            let c = combos[i]
            let elapsed = Double(monotonicNanoseconds() - started) / 1e9
            let eta = done > 1 ? elapsed / Double(done - 1) * Double(total - done + 1) : 0
            progress(
                "[\(done)/\(total)] \(phase) \(c.label) — \(Self.duration(elapsed)) elapsed, ETA \(Self.duration(eta))")
            guard failures[i] == nil else { return }
            journal(i)
            do {
                let begun = monotonicNanoseconds()
                let r = try c.scenario.run(c.subject, threads: c.threads, elements: elements)
                if record { raw[i].append(r) }
                if size, let budget {
                    let seconds = Double(monotonicNanoseconds() - begun) / 1e9
                    combos[i].elements = Self.sized(c.elements, warm: elements, seconds: seconds, budget: budget)
                    if combos[i].elements != c.elements {
                        progress(
                            "\(c.label): \(combos[i].elements) elements a repetition, not \(c.elements) (its warm-up projects \(String(format: "%.2f", seconds * Double(c.elements) / Double(elements))) s, the budget is \(budget) s)"
                        )
                    }
                }
            } catch {
                failures[i] = "\(error)"
                progress("FAILED \(c.label): \(error)")
            }
        }

        if configuration.warmup {
            for i in combos.indices {
                // Sizing times the second half of the warm-up: the first is cold (first use of
                // the design's code and metadata, the scenario's threads), and timed it made
                // designs that fit look twice their cost.
                let sizes = sizing && combos[i].scenario.sizesToBudget
                let warm = max(1, combos[i].elements / (sizes ? 20 : 10))
                step(i, elements: warm, record: false, phase: "warm-up")
                if sizes { step(i, elements: warm, record: false, phase: "warm-up (timed)", size: true) }
            }
        }
        for r in 0..<reps {
            for i in Self.order(blocks: blocks, seed: seed, round: r) {
                step(i, elements: combos[i].elements, record: true, phase: "rep \(r + 1)/\(reps)")
            }
        }

        finished()
        let rows = combos.indices.map { i -> ResultsFile.Row in
            let c = combos[i]
            let ok = failures[i] == nil && !raw[i].isEmpty
            return ResultsFile.Row(
                scenario: c.scenario, design: c.subject, threads: c.threads,
                elements: c.elements, status: statuses[i] ?? (ok ? .ok : .failed), failure: failures[i],
                repetitions: raw[i], summary: ok ? ResultsFile.Summary(raw[i], side: c.scenario.sideMetric) : nil,
                allocationsExact: c.scenario.allocationsAreExact(for: c.subject))
        }
        var file = ResultsFile(
            schema: ResultsFile.currentSchema,
            createdAt: ISO8601DateFormatter().string(from: Date()),
            machine: MachineFingerprint.current(),
            configuration: .init(
                preset: configuration.preset, repetitions: reps, warmup: configuration.warmup,
                threads: configuration.threads, elementsOverride: configuration.elements,
                handoff: "spin-yield (spin \(SpinWait.polls) polls, then sched_yield); waiters park",
                orderSeed: seed, repetitionBudget: budget),
            rows: rows, peakRSSBytes: ResourceUsage.now().peakRSSBytes)
        file.declaredKind = .run
        file.catalog = .current
        file.computeRatios()
        return file
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 60
            ? String(format: "%.0fs", seconds) : String(format: "%dm%02ds", Int(seconds) / 60, Int(seconds) % 60)
    }
}
