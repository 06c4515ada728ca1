import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// Rounds a run added to one open question (`stepbench run --decide`): its designs and floor,
/// measured together in `rounds` more rounds of one process, appended to their rows.
public struct AddedRounds: Codable, Equatable, Sendable {
    public var scenario: ScenarioKind
    public var threads: Int
    public var metric: Metric
    /// The contenders: the first by median and those it was not yet decided against.
    public var designs: [Subject]
    public var rounds: Int
    public var seconds: Double
}

/// Measures adaptively until the run's questions are decided (``Verdict``), within a budget.
///
/// After the timing pass, each open question gets more rounds between its contenders only: the
/// first by median and the designs it is neither separated from nor equivalent to, with their
/// scenario's floor, in one process of rounds (the block of the first pass: the designs and the
/// floor seconds apart, the order shuffled each round), at the elements the first pass sized.
/// Their repetitions are appended to the rows, each marked with its round (a number new to the
/// run, the same in every row of the batch), so rows pair by round
/// (``RepetitionResult/sameRounds(_:_:)``) however many batches each took part in. When the
/// rounds change which design is first by median, a design decided against the old first but
/// not against the new one rejoins the contenders. A question whose rows fault is left
/// open. Questions are served cheapest first (the rounds they still need × their rounds'
/// time), and a batch is run only if it fits in what is left of the budget.
public struct Deciding {
    /// Seconds the added rounds may take in all.
    public var budget: Double
    /// Runs one timing process of a configuration (the run's timing pass, asked of a child).
    public var measure: (RunConfiguration) throws -> ResultsFile
    public var progress: (String) -> Void = { _ in }

    /// Rounds a batch adds: at least this many, at most ``largestBatch``.
    public static let smallestBatch = 4
    public static let largestBatch = 16

    public init(budget: Double, measure: @escaping (RunConfiguration) throws -> ResultsFile) {
        self.budget = budget
        self.measure = measure
    }

    /// `timing` (the first pass, of `configuration`) with rounds added to its open questions
    /// until each is decided or the budget is spent; the file records what was added.
    public func extend(_ timing: ResultsFile, configuration: RunConfiguration, seed: UInt64) throws -> ResultsFile {
        var file = timing
        var contenders: [Verdict.Question: [Subject]] = [:]
        var stalled = Set<Verdict.Question>()
        let started = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        var batch = 0
        while true {
            let open = Verdict.decide(file).filter { $0.outcome == .open && !stalled.contains($0.question) }
            guard !open.isEmpty else { break }
            let planned = open.map { v in (v, plan(v, in: file)) }.sorted { $0.1.seconds < $1.1.seconds }
            var ran = false
            for (verdict, plan) in planned {
                let q = verdict.question
                let designs = [verdict.first] + verdict.open
                let rows = designs.compactMap { d in
                    file.rows.firstIndex { $0.key == RowKey(scenario: q.scenario, design: d, threads: q.threads) }
                }
                guard rows.count == designs.count else {
                    progress("deciding \(q): a contender has no row; left open")
                    stalled.insert(q)
                    continue
                }
                if let before = contenders[q], !Set(designs).isSubset(of: Set(before)) {
                    let back = designs.filter { !before.contains($0) }
                    progress(
                        "deciding \(q): \(names(back)) back among the contenders (the first by median is now \(verdict.first.name))"
                    )
                }
                guard elapsed() + plan.seconds <= budget else { continue }
                batch += 1
                progress(
                    "deciding \(q): \(plan.rounds) more rounds of \(names(designs)) (open: \(names(verdict.open))), \(String(format: "%.0f", elapsed())) of \(String(format: "%.0f", budget)) s spent"
                )
                let begun = elapsed()
                let added = try measure(
                    batchConfiguration(
                        q, designs: designs, rounds: plan.rounds, of: configuration, file: file,
                        seed: seed &+ UInt64(batch) &* 7919))
                guard append(added, to: &file, question: q) else {
                    progress("deciding \(q): a contender did not verify in the added rounds; left open")
                    stalled.insert(q)
                    continue
                }
                contenders[q] = (contenders[q] ?? []) + designs.filter { !(contenders[q] ?? []).contains($0) }
                file.addedRounds =
                    (file.addedRounds ?? []) + [
                        AddedRounds(
                            scenario: q.scenario, threads: q.threads, metric: q.metric, designs: designs,
                            rounds: plan.rounds,
                            seconds: (elapsed() - begun).rounded(toPlaces: 1))
                    ]
                ran = true
            }
            if !ran { break }
        }
        file.computeRatios()
        return file
    }

    /// How many rounds `verdict`'s open pairs still need to decide (separate, or fit inside the
    /// margin), from their intervals so far, and what a batch of them would take.
    func plan(_ verdict: Verdict, in file: ResultsFile) -> (rounds: Int, seconds: Double) {
        let q = verdict.question
        let ranking = Ranking.rank(file).first {
            $0.scenario == q.scenario && $0.threads == q.threads && $0.metric == q.metric && $0.field == q.field
        }
        var needed = Self.smallestBatch
        for pair in ranking?.pairs ?? [] where pair.faster == verdict.first && verdict.open.contains(pair.slower) {
            guard let ratio = pair.ratio, let high = pair.ciHigh, pair.rounds >= Ranking.minimumRounds else { continue }
            // the interval's half-width h shrinks as 1/√n: n·(h/target)² rounds bring it to target
            let h = log(high / ratio), d = abs(log(ratio)), m = log(1 + Ranking.equivalenceMargin)
            let target = max(d, m - d, 0.01)
            let total = Double(pair.rounds) * (h / target) * (h / target)
            needed = max(needed, Int((total - Double(pair.rounds)).rounded(.up)))
        }
        let rounds = min(Self.largestBatch, needed)
        let designs = Set([verdict.first] + verdict.open)
        let floor = file.floor(of: q.scenario)
        let perRound = file.rows.filter {
            $0.threads == q.threads
                && ((designs.contains($0.design) && $0.scenario == q.scenario) || $0.scenario == floor)
        }.map { row in Statistics.median(row.repetitions.map { Double($0.elapsedNanoseconds) / 1e9 }) }
            .reduce(0, +)
        // a warm-up of a tenth, and a process to start
        return (rounds, perRound * (Double(rounds) + 0.1) + 0.5)
    }

    /// The run of `designs` and the floor of `question`'s scenario at its threads, `rounds` rounds,
    /// at the elements the first pass ran them with.
    func batchConfiguration(
        _ q: Verdict.Question, designs: [Subject], rounds: Int, of configuration: RunConfiguration, file: ResultsFile,
        seed: UInt64
    ) -> RunConfiguration {
        var c = configuration
        c.designs = designs.compactMap(\.design)
        let floor = file.floor(of: q.scenario)
        c.scenarios = [q.scenario] + (floor.map { f in file.rows.contains { $0.scenario == f } ? [f] : [] } ?? [])
        c.threads = [q.threads]
        c.repetitions = rounds
        c.warmup = true
        c.orderSeed = seed
        c.sizedElements = nil
        c.sizedElements = BenchmarkRunner.combinations(of: c).map { combo in
            file.rows.first {
                $0.key == RowKey(scenario: combo.scenario, design: combo.subject, threads: combo.threads)
            }?
            .elements ?? combo.elements
        }
        return c
    }

    /// Appends `added`'s repetitions to `file`'s rows of the same key; false (nothing appended)
    /// when one of the contenders' rows did not verify.
    func append(_ added: ResultsFile, to file: inout ResultsFile, question: Verdict.Question) -> Bool {
        guard added.rows.filter({ !$0.scenario.isFloor }).allSatisfy({ $0.status == .ok && !$0.repetitions.isEmpty })
        else { return false }
        var targets: [(Int, ResultsFile.Row)] = []
        for row in added.rows where row.status == .ok {
            guard let i = file.rows.firstIndex(where: { $0.key == row.key }), file.rows[i].status == .ok,
                file.rows[i].elements == row.elements
            else { return false }
            targets.append((i, row))
        }
        // the batch's rounds: numbers no repetition of the run has yet, the same in every row
        guard Set(targets.map { $0.1.repetitions.count }).count <= 1 else { return false }
        let next =
            1
            + (file.rows.flatMap { row in row.repetitions.indices.map { row.repetitions[$0].round(at: $0) } }.max()
                ?? -1)
        for (i, row) in targets {
            var added = row.repetitions
            for r in added.indices { added[r].round = next + r }
            file.rows[i].repetitions += added
            file.rows[i].summary = ResultsFile.Summary(file.rows[i].repetitions, side: file.rows[i].scenario.sideMetric)
        }
        return true
    }

    func names(_ subjects: [Subject]) -> String { subjects.map(\.name).joined(separator: ", ") }
}

extension Double {
    fileprivate func rounded(toPlaces places: Int) -> Double {
        let scale = Foundation.pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
