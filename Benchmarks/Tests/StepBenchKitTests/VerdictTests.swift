import Foundation
import StepBenchScenarios
import Testing

@testable import StepBenchKit

@Suite("Verdicts: a winner, an equivalence within the margin, or open; rounds added until decided")
struct VerdictTests {
    static func perElement(_ file: ResultsFile) throws -> Verdict {
        try #require(Verdict.decide(file).first { $0.question.role == .perElement })
    }

    @Test("a design faster in every round is the winner; its exact count stands beside it")
    func test_verdict_winner() throws {
        let drift = [1.0, 1.2, 0.8, 1.1, 0.9]
        let f = RankingTests.file([("mutex", 1.2, drift), ("atomic", 1.0, drift), ("locked", 1.6, drift)])
        let profile = ResultsFile.ProfileRow(
            scenario: .syncStep, design: "atomic", elementsLow: 1, elementsHigh: 2, instructionsLow: 1,
            instructionsHigh: 2, instructionsPerElement: 1_058, topFunctions: [])
        var other = profile
        other.design = "mutex"
        other.instructionsPerElement = 1_265
        let verdict = try #require(
            Verdict.decide(f, profiles: [other, profile]).first { $0.question.role == .perElement })
        #expect(verdict.outcome == .winner && verdict.leaders == ["atomic"] && verdict.open.isEmpty)
        #expect(verdict.question.metric == .nsPerElement && verdict.question.threads == 1)
        // the exact counts in the ranking's order, the first's first
        #expect(verdict.exact?.map(\.design) == ["atomic", "mutex"])
    }

    @Test("two designs whose ratio's interval lies inside ±10% are equivalent: a decided tie, not 'no winner'")
    func test_verdict_equivalence() throws {
        // mutex within 3% of atomic either way in every round (so not separated); locked 60% slower
        let drift = [1.0, 1.2, 0.8, 1.1, 0.9, 1.0, 1.05, 0.95]
        let near = [1.01, 0.98, 1.0, 1.03, 0.99, 1.02, 0.98, 1.01]
        let f = RankingTests.file([
            ("atomic", 1.0, drift), ("mutex", 1.0, zip(drift, near).map { $0 * $1 }), ("locked", 1.6, drift),
        ])
        let verdict = try Self.perElement(f)
        #expect(verdict.outcome == .equivalent, "\(verdict.summary)")
        #expect(Set(verdict.leaders) == ["atomic", "mutex"] && verdict.open.isEmpty)
        #expect(verdict.margin == Ranking.equivalenceMargin && Ranking.equivalenceMargin <= 0.10)
        let json = try JSONSerialization.jsonObject(with: JSONOutput.encode(verdict)) as? [String: Any]
        #expect(json?["outcome"] as? String == "equivalent" && json?["decided"] as? Bool == true)
    }

    @Test("a pair neither separated nor inside the margin leaves the question open, saying what it could tell apart")
    func test_verdict_open() throws {
        let f = RankingTests.file([
            ("atomic", 1.0, [1.0, 1.6, 0.7, 1.3, 0.9]), ("mutex", 1.0, [1.2, 1.0, 1.1, 0.8, 1.4]),
        ])
        let verdict = try Self.perElement(f)
        #expect(verdict.outcome == .open && verdict.leaders.isEmpty && verdict.open.count == 1)
        #expect((verdict.detectable ?? 0) > 1.1, "\(verdict.summary)")
        #expect(verdict.summary.contains("open, by median"))
    }

    @Test("a verdict of a run others kept busy says so")
    func test_verdict_disturbed() throws {
        let drift = [1.0, 1.2, 0.8, 1.1, 0.9]
        var f = RankingTests.file([("mutex", 1.2, drift), ("atomic", 1.0, drift)])
        f.quietness = Quietness(seconds: 100, otherCPUSeconds: 80, loadAverage: [0.1, 2.0])
        #expect(try Self.perElement(f).disturbed == true)
        f.quietness = Quietness(seconds: 100, otherCPUSeconds: 3, loadAverage: [0.1, 0.2])
        #expect(try Self.perElement(f).disturbed == nil)
    }
}

extension VerdictTests {
    /// A measuring process as a test: each combination of `configuration`, `rounds` rounds at
    /// the design's factor with a small, paired drift; counts the configurations it was asked.
    final class FakeMeasure: @unchecked Sendable {
        var asked: [RunConfiguration] = []
        let factors: [String: Double]

        init(_ factors: [String: Double]) { self.factors = factors }

        func measure(_ c: RunConfiguration) -> ResultsFile {
            asked.append(c)
            var file = RankingTests.file([])
            // each process drifts its own way (a batch's rows share it round by round)
            let drift = (0..<(c.repetitions ?? 1)).map { 1.0 + 0.01 * Double(($0 + 2 * asked.count) % 5) }
            file.rows = BenchmarkRunner.combinations(of: c).map { combo in
                let factor = factors[combo.subject.name] ?? 1
                let reps = drift.map { d in
                    RepetitionResult(
                        elapsedNanoseconds: UInt64(1_000_000 * factor * d), elements: combo.elements, allocations: 0,
                        cpuNanoseconds: 1)
                }
                return ResultsFile.Row(
                    scenario: combo.scenario, design: combo.subject, threads: combo.threads, elements: combo.elements,
                    status: .ok, failure: nil, repetitions: reps, summary: ResultsFile.Summary(reps))
            }
            return file
        }
    }

    @Test("open questions get rounds between their contenders only, appended in step, until decided")
    func test_deciding_addsRoundsToTheContenders() throws {
        // five noisy rounds leave atomic and mutex open; locked is separated from the start
        let f = RankingTests.file([
            ("atomic", 1.0, [1.0, 1.6, 0.7, 1.3, 0.9]), ("mutex", 1.15, [1.2, 1.0, 1.1, 0.8, 1.4]),
            ("locked", 3.0, [1.0, 1.0, 1.0, 1.0, 1.0]),
        ])
        #expect(try Self.perElement(f).outcome == .open)
        let fake = FakeMeasure(["atomic": 1.0, "mutex": 1.15, "locked": 3.0])
        var configuration = RunConfiguration()
        configuration.allowDebug = true
        let deciding = Deciding(budget: 60) { fake.measure($0) }
        let decided = try deciding.extend(f, configuration: configuration, seed: 1)
        let verdict = try Self.perElement(decided)
        #expect(verdict.outcome == .winner && verdict.first == "atomic", "\(verdict.summary)")
        #expect(
            !fake.asked.isEmpty && fake.asked.allSatisfy { Set($0.designs.map(\.rawValue)) == ["atomic", "mutex"] })
        let reps = Dictionary(uniqueKeysWithValues: decided.rows.map { ($0.design.name, $0.repetitions.count) })
        #expect(reps["locked"] == 5 && reps["atomic"] == reps["mutex"] && reps["atomic"]! > 5)
        #expect(decided.addedRounds?.map(\.rounds).reduce(0, +) == reps["atomic"]! - 5)
        // the batch ran at the elements the first pass ran
        #expect(fake.asked.allSatisfy { $0.sizedElements == [10_000, 10_000] })
    }

    @Test("a design decided against the first by median rejoins when the first changes; its rounds pair by round")
    func test_deciding_contendersMayGrow() throws {
        // atomic leads the first pass; locked is separated from it, mutex is not. The added rounds
        // make mutex the first, and locked's five rounds do not separate it from mutex: locked
        // must rejoin, and its added rounds pair with mutex's by round, not by index
        let f = RankingTests.file([
            ("atomic", 1.0, [1.0, 1.0, 1.0, 1.0, 1.0]), ("mutex", 1.0, [1.2, 0.8, 1.5, 0.7, 1.3]),
            ("locked", 1.3, [1.0, 1.0, 1.0, 1.0, 1.0]),
        ])
        let first = try Self.perElement(f)
        #expect(first.first == "atomic" && first.open == ["mutex"], "\(first.summary)")
        let fake = FakeMeasure(["atomic": 1.3, "mutex": 1.0, "locked": 1.6])
        var configuration = RunConfiguration()
        configuration.allowDebug = true
        let decided = try Deciding(budget: 60) { fake.measure($0) }.extend(f, configuration: configuration, seed: 1)
        let verdict = try Self.perElement(decided)
        #expect(verdict.outcome == .winner && verdict.first == "mutex", "\(verdict.summary)")
        #expect(fake.asked.contains { $0.designs.map(\.rawValue).contains("locked") }, "locked rejoined")
        let rows = Dictionary(uniqueKeysWithValues: decided.rows.map { ($0.design.name, $0) })
        let locked = try #require(rows["locked"]), mutex = try #require(rows["mutex"])
        #expect(locked.repetitions.count < mutex.repetitions.count, "locked missed mutex's first batch")
        let pairs = RepetitionResult.sameRounds(locked.repetitions, mutex.repetitions)
        #expect(pairs.count == locked.repetitions.count)
        // every pair after the first pass is one added batch's round: the same drift on both
        for (a, b) in pairs.dropFirst(5) { #expect(abs(a.nsPerElement / b.nsPerElement - 1.6) < 1e-9) }
        // rows without rounds pair by index, as before
        #expect(RepetitionResult.sameRounds(f.rows[0].repetitions, f.rows[1].repetitions).count == 5)
    }

    @Test("no budget, no rounds: an open question stays open")
    func test_deciding_respectsTheBudget() throws {
        let f = RankingTests.file([
            ("atomic", 1.0, [1.0, 1.6, 0.7, 1.3, 0.9]), ("mutex", 1.15, [1.2, 1.0, 1.1, 0.8, 1.4]),
        ])
        let fake = FakeMeasure(["atomic": 1.0, "mutex": 1.15])
        var configuration = RunConfiguration()
        configuration.allowDebug = true
        let decided = try Deciding(budget: 0) { fake.measure($0) }.extend(f, configuration: configuration, seed: 1)
        #expect(fake.asked.isEmpty && decided.addedRounds == nil)
        #expect(try Self.perElement(decided).outcome == .open)
    }
}

extension VerdictTests {
    /// sync-step rows of `designs` (ns per element per round) and floor-sync's, ratios computed.
    static func withFloor(_ rows: [(Subject, [Double])], floor: [Double]) -> ResultsFile {
        var f = RankingTests.file(rows.map { ($0.0, 1.0, $0.1.map { $0 / 100 }) })
        var floorRow = f.rows[0]
        floorRow.scenario = .floorSync
        floorRow.design = .floor
        floorRow.repetitions = floor.map {
            RepetitionResult(
                elapsedNanoseconds: UInt64($0 * 10_000), elements: 10_000, allocations: 0,
                cpuNanoseconds: UInt64($0 * 10_000))
        }
        f.rows.append(floorRow)
        for i in f.rows.indices { f.rows[i].summary = ResultsFile.Summary(f.rows[i].repetitions) }
        f.computeRatios()
        return f
    }

    @Test("a row below its floor that its rounds do not separate from it is no harness doubt; one they do is")
    func test_belowFloor_pairedRounds() throws {
        // the floor at 100 every round; atomic's median 80, but two slow rounds: round by round
        // the ratio's interval reaches 1
        let f = Self.withFloor(
            [("atomic", [70, 75, 80, 85, 90, 140, 150, 72, 78]), ("mutex", Array(repeating: 200, count: 9))],
            floor: Array(repeating: 100, count: 9))
        let atomic = try #require(
            BelowFloor.find(f).first { $0.key.subject == "atomic" && $0.key.metric == .nsPerElement })
        #expect(atomic.decided && (atomic.roundHigh ?? 0) >= 1, "\(atomic)")
        #expect(try Self.perElement(f).outcome == .winner)
        // half the floor in every round: nothing explains it, and the verdict does not name it
        let g = Self.withFloor(
            [("atomic", Array(repeating: 50, count: 9)), ("mutex", Array(repeating: 200, count: 9))],
            floor: Array(repeating: 100, count: 9))
        let below = try #require(
            BelowFloor.find(g).first { $0.key.subject == "atomic" && $0.key.metric == .nsPerElement })
        #expect(below.cause == .unexplained && (below.roundHigh ?? 1) < 1, "\(below)")
        let verdict = try Self.perElement(g)
        #expect(verdict.outcome == .belowFloor && verdict.leaders.isEmpty && !verdict.outcome.isDecided)
    }
}
