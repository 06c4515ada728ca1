@testable import StepBenchKit
import Testing
@testable import StepBenchScenarios

@Suite("Statistics: median, quantiles, bootstrap CI")
struct StatisticsTests {
    @Test func test_median_oddAndEven() {
        #expect(Statistics.median([5, 1, 3]) == 3)
        #expect(Statistics.median([4, 1, 3, 2]) == 2.5)
        #expect(Statistics.median([7]) == 7)
    }

    @Test func test_quantile_interpolates() {
        #expect(Statistics.quantile([1, 2, 3, 4, 5], 0) == 1)
        #expect(Statistics.quantile([1, 2, 3, 4, 5], 1) == 5)
        #expect(Statistics.quantile([1, 2, 3, 4, 5], 0.25) == 2)
        #expect(Statistics.quantile([10, 20], 0.5) == 15)
    }

    @Test func test_bootstrap_containsMedianAndIsDeterministic() {
        let values: [Double] = [10, 11, 9, 10.5, 9.5, 10.2, 30]  // one outlier
        let (low, high) = Statistics.bootstrapMedianCI(values)
        #expect(low <= 10.2 && 10.2 <= high)
        #expect(low >= 9 && high <= 11, "the median's interval ignores the outlier: [\(low), \(high)]")
        #expect(Statistics.bootstrapMedianCI(values) == (low, high))
    }

    @Test func test_bootstrap_constantSampleHasZeroWidth() {
        let (low, high) = Statistics.bootstrapMedianCI([3, 3, 3, 3])
        #expect(low == 3 && high == 3)
        #expect(Statistics.bootstrapMedianCI([4]) == (4, 4))
    }

    @Test func test_bootstrap_coversTrueMedianMostOfTheTime() {
        // Samples of 11 from a known distribution (median 100): a 95% interval should cover
        // the true median in roughly 95% of 200 trials; accept 85%–100%.
        var rng = SplitMix64(seed: 7)
        var covered = 0
        for trial in 0..<200 {
            let sample = (0..<11).map { _ in 100 + Double(Int(rng.next() % 41) - 20) }
            let (low, high) = Statistics.bootstrapMedianCI(sample, resamples: 500, seed: UInt64(trial))
            if low <= 100 && 100 <= high { covered += 1 }
        }
        #expect(covered >= 170, "covered \(covered) of 200")
    }
}
