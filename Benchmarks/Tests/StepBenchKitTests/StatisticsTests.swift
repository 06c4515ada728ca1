import Foundation
@_spi(StepBench) import SteppingConformance
import Testing

@testable import StepBenchKit
@testable import StepBenchScenarios

@Suite("Statistics: median, quantiles, bootstrap CI")
struct StatisticsTests {
    @Test func test_median_oddAndEven() {
        #expect(Statistics.median([5, 1, 3]) == 3)
        // The ⌈n/2⌉-th order statistic: the lower middle value when n is even, the same statistic
        // whose distribution the exact bootstrap computes (one median definition throughout).
        #expect(Statistics.median([4, 1, 3, 2]) == 2)
        #expect(MedianBootstrap([4, 1, 3, 2]).median == Statistics.median([4, 1, 3, 2]))
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

    @Test func test_bootstrap_isResamplingAndSortingToTheBit() {
        // The interval counts draws per rank instead of sorting each resample: it must equal,
        // exactly, resampling into an array and taking its median (what results files hold).
        func resampled(_ values: [Double], resamples: Int, seed: UInt64) -> (low: Double, high: Double) {
            var rng = SplitMix64(seed: seed)
            var medians: [Double] = []
            var sample = values
            for _ in 0..<resamples {
                for i in sample.indices { sample[i] = values[Int(rng.next() % UInt64(values.count))] }
                medians.append(Statistics.median(sample))
            }
            return (Statistics.quantile(medians, 0.025), Statistics.quantile(medians, 0.975))
        }
        var rng = SplitMix64(seed: 3)
        for n in 2...40 {
            // ties on purpose: values from a few levels, in random order
            let values = (0..<n).map { _ in 100 + Double(rng.next() % UInt64(1 + n / 3)) * 0.5 }
            let counted = Statistics.bootstrapMedianCI(values, resamples: 300, seed: UInt64(n))
            #expect(counted == resampled(values, resamples: 300, seed: UInt64(n)), "n = \(n): \(values)")
        }
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

    @Test func test_binomialTail_matchesDirectSums() {
        // P(Bin(10, 0.3) ≥ 4) = 0.35039; P(Bin(5, 0.2) ≥ 3) = 0.05792
        #expect(abs(Statistics.binomialUpperTail(n: 10, p: 0.3, atLeast: 4) - 0.3503892816) < 1e-9)
        #expect(abs(Statistics.binomialUpperTail(n: 5, p: 0.2, atLeast: 3) - 0.05792) < 1e-9)
        #expect(Statistics.binomialUpperTail(n: 5, p: 0.2, atLeast: 0) == 1)
        #expect(abs(Statistics.normalQuantile(0.975) - 1.959964) < 1e-5)
        #expect(abs(Statistics.normalQuantile(0.005) + 2.575829) < 1e-5)
        #expect(abs(Statistics.studentTQuantile(0.975, degreesOfFreedom: 4) - 2.776445) < 1e-5)
        #expect(abs(Statistics.studentTQuantile(0.995, degreesOfFreedom: 9) - 3.249836) < 1e-5)
        #expect(abs(Statistics.studentTQuantile(0.025, degreesOfFreedom: 1) + 12.706205) < 1e-4)
    }

    @Test func test_exactBootstrap_agreesWithResampling() {
        // The exact bootstrap of a median is the limit of resampling: a 20,000-resample Monte
        // Carlo bootstrap of the same ratio lands within a hair of its quantiles.
        var rng = SplitMix64(seed: 11)
        let a = (0..<41).map { _ in 100 * exp(Double(rng.next() % 1000) / 5000) }
        let b = (0..<41).map { _ in 104 * exp(Double(rng.next() % 1000) / 5000) }
        let masses = MedianBootstrap(a).masses
        #expect(abs(masses.reduce(0, +) - 1) < 1e-9)
        let (low, high) = MedianBootstrap.ratioInterval(
            baseline: MedianBootstrap(a), current: MedianBootstrap(b), tail: 0.025)
        let ma = Statistics.resampledMedians(a, resamples: 20_000, rng: &rng)
        let ratios = zip(Statistics.resampledMedians(b, resamples: 20_000, rng: &rng), ma).map { $0 / $1 }
        let mcLow = Statistics.quantile(ratios, 0.025), mcHigh = Statistics.quantile(ratios, 0.975)
        #expect(
            abs(low / mcLow - 1) < 0.004 && abs(high / mcHigh - 1) < 0.004,
            "exact [\(low), \(high)] vs resampled [\(mcLow), \(mcHigh)]")
    }
}
