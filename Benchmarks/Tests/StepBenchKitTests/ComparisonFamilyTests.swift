import Foundation
import Testing

@testable import StepBenchKit
@testable import StepBenchScenarios
@testable import Stepping

@Suite("stepbench compare: one decided metric per row, Holm, detectable effects, contention counts")
struct ComparisonFamilyTests {
    /// sync-step atomic and floor-sync, 5 repetitions each, the design `scale` times slower.
    static func paired(scale: Double, threads: Int = 1, cores: Int = 2) -> ResultsFile {
        var f = ResultsFileTests.sample()
        f.machine.cores = cores
        f.rows = [f.rows[1], f.rows[2]]
        for i in f.rows[0].repetitions.indices {
            f.rows[0].repetitions[i].elapsedNanoseconds = UInt64(
                Double(f.rows[0].repetitions[i].elapsedNanoseconds) * scale)
        }
        if threads != 1 {
            f.rows[0].scenario = .staleStorm
            f.rows[1].scenario = .floorStaleStorm
            f.rows[0].threads = threads
            f.rows[1].threads = threads
        }
        return f
    }

    /// `paired(scale:)` with a second design's row (locked) at its own scale.
    static func two(_ atomic: Double, _ locked: Double) -> ResultsFile {
        var f = Self.paired(scale: atomic)
        var other = Self.paired(scale: locked).rows[0]
        other.design = "locked"
        f.rows.append(other)
        return f
    }

    @Test func test_compare_decidesOnlyTheScenariosPrimaryMetric() {
        let c = Comparison.compare(baseline: Self.paired(scale: 1), current: Self.paired(scale: 1.3))
        let design = c.rows.filter { $0.design == "atomic" && !$0.exact }
        let decided = design.filter { $0.verdict != .information }
        #expect(decided.map(\.metric) == [.nsPerElementVsFloor])
        #expect(design.contains { $0.metric == .nsPerElement && $0.verdict == .information })
        // every timing row states what it could detect, decided or not
        #expect(design.allSatisfy { $0.detectableEffect != nil })
        // the family: sync-step's paired ratio alone (the floor row is shown, not decided)
        #expect(abs(c.decisionLevel - (1 - 0.01)) < 1e-12)
        #expect(c.rows.filter { $0.design == "floor" && !$0.exact }.allSatisfy { $0.verdict == .information })
    }

    @Test func test_compare_oversubscribedRowsAreShownNotDecided() throws {
        let c = Comparison.compare(
            baseline: Self.paired(scale: 1, threads: 4), current: Self.paired(scale: 2, threads: 4))
        let timing = c.rows.filter { !$0.exact && $0.ratio != nil }
        #expect(!timing.isEmpty)
        #expect(timing.allSatisfy { $0.verdict == .information && $0.oversubscribed == true })
        #expect(c.regressions.isEmpty)
        #expect(try c.render(.text).contains("4 (over cores)"))
    }

    @Test func test_compare_inconclusiveSaysWhatItCouldDetect() throws {
        let noisy = [0.6, 1.4, 1.0, 0.7, 1.5]
        let c = Comparison.compare(
            baseline: ComparisonTests.file(scale: 1, noise: noisy),
            current: ComparisonTests.file(scale: 1.1, noise: noisy.reversed()))
        let row = c.rows.first { $0.metric == .nsPerElement }!
        #expect(row.verdict == .inconclusive)
        #expect(row.detectableEffect! > 0.3)
        let text = try c.render(.text)
        #expect(text.contains("inconclusive, could detect ±"))
        #expect(text.contains("detectable effect of the decided timing rows (median by scenario): sync-step ±"))
    }

    @Test func test_timingEvidence_pValueFollowsTheInterval() {
        let base = [1.0, 1.02, 0.98, 1.01, 0.99]
        let same = TimingEvidence(baseline: base, current: base, driftSD: 0.02, driftRuns: nil)
        #expect(same.pValue() == 1)
        let shifted = TimingEvidence(baseline: base, current: base.map { $0 * 1.12 }, driftSD: 0.02, driftRuns: nil)
        let p = shifted.pValue()
        #expect(p > 1e-6 && p < 0.05)
        // at a tail just above p/2 the interval excludes 1; just below, it holds it
        #expect(shifted.interval(tail: p / 2 * 1.01).0 > 1)
        #expect(shifted.interval(tail: p / 2 * 0.99).0 <= 1)
    }

    @Test func test_compare_holmDecidesInOrderOfPValue() {
        // Two decided rows (atomic's and locked's paired ratios): the smaller p-value is decided
        // at 1%/2, and, being significant, lets the other be decided at 1%/1.
        let base = Self.two(1, 1), cur = Self.two(1.3, 1.1)
        let c = Comparison.compare(baseline: base, current: cur)
        let decided = c.rows.filter { $0.verdict != .information && $0.pValue != nil }.sorted {
            $0.pValue! < $1.pValue!
        }
        #expect(decided.map(\.design).sorted() == ["atomic", "locked"])
        for (k, row) in decided.enumerated() {
            let key = RowKey(
                scenario: ScenarioKind(rawValue: row.scenario)!, design: Subject(name: row.design)!,
                threads: row.threads)
            func samples(_ f: ResultsFile) -> [Double] {
                Comparison.timingSamples(f.row(key)!, in: f).first { $0.metric == row.metric }!.samples
            }
            let expected = TimingEvidence(baseline: samples(base), current: samples(cur), driftSD: 0, driftRuns: nil)
                .interval(tail: Comparison.decisionTail(comparisons: 2 - k))
            #expect(abs(row.decisionLow! - expected.0) < 1e-12 && abs(row.decisionHigh! - expected.1) < 1e-12)
        }
    }

    @Test("paired: every decided row has its p-value, also after Holm's first non-rejection")
    func test_paired_everyDecidedRowHasItsPValue() throws {
        // Unchanged builds: Holm cannot reject the first row. Its copy in paired stopped there
        // and left the other decided rows without a p-value (seen on committed files).
        let a = [Self.two(1, 1), Self.two(1, 1), Self.two(1, 1)]
        let b = [Self.two(1.01, 0.99), Self.two(0.99, 1.02), Self.two(1.02, 1.01)]
        let c = try Comparison.paired(a: a, b: b)
        let decided = c.rows.filter { $0.verdict != .information }
        #expect(decided.count >= 2)
        #expect(decided.allSatisfy { $0.pValue != nil }, "\(decided.map { ($0.design, $0.pValue as Any) })")
    }

    @Test func test_compare_contentionCountsOnOneThreadAreExact() {
        func counted(_ failures: UInt64) -> ResultsFile {
            var f = ComparisonTests.file(scale: 1)
            for i in f.rows[0].repetitions.indices {
                f.rows[0].repetitions[i].contention = ContentionCounts(exchangeFailures: failures)
            }
            f.rows[0].contentionRepetitions = 3
            return f
        }
        let c = Comparison.compare(baseline: counted(0), current: counted(10_000))
        let row = c.rows.first { $0.metric == .exchangeFailuresPerElement }!
        #expect(row.exact && row.verdict == .regression && row.current == 1)
        #expect(c.exactRegressions.count == 1)
        let same = Comparison.compare(baseline: counted(0), current: counted(0))
        #expect(same.rows.first { $0.metric == .exchangeFailuresPerElement }?.verdict == .unchanged)
    }

    @Test func test_passes_countingPassFillsEachRepetitionsCounts() throws {
        let file = ComparisonTests.file(scale: 1)
        var counting = file
        counting.rows[0].repetitions = Array(counting.rows[0].repetitions.prefix(3))
        for i in counting.rows[0].repetitions.indices {
            counting.rows[0].repetitions[i].contention = ContentionCounts(lockSlowPaths: UInt64(i + 1) * 10_000)
        }
        let combined = try RunPasses.combine(file, counting: counting)
        #expect(combined.rows[0].contentionRepetitions == 3)
        #expect(combined.rows[0].repetitions[3].contention?.lockSlowPaths == 10_000)
        #expect(combined.rows[0].summary?.counts?[Metric.lockSlowPathsPerElement.rawValue] == 2)
        var missing = counting
        missing.rows = []
        expectFailure(.missingInput) { try RunPasses.combine(file, counting: missing) }
    }

    @Test func test_passes_countsOverFewerElementsAreCountsPerTheirOwnElements() throws {
        let timing = ComparisonTests.file(scale: 1)
        let elements = timing.rows[0].repetitions[0].elements
        func pass(_ transform: (inout RepetitionResult) -> Void) -> ResultsFile {
            var f = timing
            for i in f.rows.indices {
                for r in f.rows[i].repetitions.indices {
                    f.rows[i].repetitions[r].elements = elements / 4
                    transform(&f.rows[i].repetitions[r])
                }
            }
            return f
        }
        let allocations = pass { $0.allocations = UInt64(elements / 4) * 2 }  // 2 per element
        let counting = pass { $0.contention = ContentionCounts(lockSlowPaths: UInt64(elements / 4) / 2) }
        let combined = try RunPasses.combine(
            RunPasses.combine(timing: timing, allocations: allocations), counting: counting)
        let rep = combined.rows[0].repetitions[0]
        #expect(rep.elements == elements && rep.countedElements == elements / 4)
        #expect(rep.allocationsPerElement == 2)
        #expect(combined.rows[0].summary?.allocationsPerElement.median == 2)
        #expect(combined.rows[0].summary?.counts?[Metric.lockSlowPathsPerElement.rawValue] == 0.5)
        // The two counting passes share the one field: they must have counted over the same.
        expectFailure(.incompatible) {
            try RunPasses.combine(RunPasses.combine(timing: timing, allocations: timing), counting: counting)
        }
        #expect(ScenarioKind.syncStep.countingElements(200_000) == 50_000)
        #expect(ScenarioKind.asyncPark.countingElements(2_000) == 2_000)  // a quarter is under the suite's
    }
}
