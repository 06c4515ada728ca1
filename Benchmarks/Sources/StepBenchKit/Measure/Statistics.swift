import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance

/// Order statistics over repetitions: the median, quantiles, and the 95% interval of a median
/// that results files carry.
///
/// **One estimator per purpose.**
/// - The 95% CI of each metric in a results file's summaries:
///   ``bootstrapMedianCI(_:resamples:seed:)``, the percentile bootstrap by resampling (2,000
///   resamples from a fixed seed, so a file's intervals are repeatable). Results files hold
///   these intervals, so another estimator would change every file's numbers.
/// - `compare`'s interval of a ratio of two medians (its verdicts) and a noise profile's
///   sampling σ: ``MedianBootstrap``, the same bootstrap computed exactly (no resampling):
///   no Monte-Carlo error, and cheap enough for the detector's thousands of synthetic trials.
/// - What both rest on (the binomial tail) and `compare`'s drift allowance needs (the Student-t
///   and normal quantiles): the special functions, SpecialFunctions.swift.
///
/// **The median**, everywhere in StepBench (summaries, compare, the exact bootstrap, the
/// scripts), is the ⌈n/2⌉-th order statistic: the usual median for odd n (every preset runs an
/// odd number of repetitions), the lower middle value for even n. One definition, so a point
/// estimate and the bootstrap distribution around it are of the same statistic.
public enum Statistics {
    public static func median(_ values: [Double]) -> Double {
        precondition(!values.isEmpty, "median of no values")
        return lowerMedian(ofSorted: values.sorted())
    }

    /// The ⌈n/2⌉-th of `sorted` (ascending).
    static func lowerMedian(ofSorted sorted: [Double]) -> Double { sorted[(sorted.count - 1) / 2] }

    /// The `q`-quantile (0…1) by linear interpolation between closest ranks.
    public static func quantile(_ values: [Double], _ q: Double) -> Double {
        precondition(!values.isEmpty, "quantile of no values")
        let s = values.sorted()
        let position = q * Double(s.count - 1)
        let lower = Int(position.rounded(.down)), upper = Int(position.rounded(.up))
        return s[lower] + (s[upper] - s[lower]) * (position - Double(lower))
    }

    /// 95% percentile-bootstrap interval of the median: resample with replacement
    /// `resamples` times, take the 2.5% and 97.5% quantiles of the resampled medians.
    public static func bootstrapMedianCI(
        _ values: [Double], resamples: Int = 2_000,
        seed: UInt64 = 0x5EED
    ) -> (low: Double, high: Double) {
        precondition(!values.isEmpty, "confidence interval of no values")
        guard values.count > 1 else { return (values[0], values[0]) }
        var rng = SplitMix64(seed: seed)
        let medians = resampledMedians(values, resamples: resamples, rng: &rng)
        return (quantile(medians, 0.025), quantile(medians, 0.975))
    }

    /// The medians of `resamples` resamples of `values` with replacement, drawn from `rng`.
    ///
    /// A resample's median depends only on how often each value was drawn: this counts the draws
    /// per rank (in sorted order) and walks the counts to the ⌈n/2⌉-th, O(n) a resample and no
    /// sort. The draws are the same, in the same order, as resampling into an array and sorting
    /// it, so every median is the same to the bit (a test holds it to that).
    static func resampledMedians(
        _ values: [Double], resamples: Int, rng: inout SplitMix64
    ) -> [Double] {
        let n = values.count
        let order = values.indices.sorted { values[$0] < values[$1] }
        let sorted = order.map { values[$0] }
        var rank = [Int](repeating: 0, count: n)
        for (r, i) in order.enumerated() { rank[i] = r }
        let middle = (n - 1) / 2  // the ⌈n/2⌉-th, counted from 0
        var counts = [Int](repeating: 0, count: n)
        var medians: [Double] = []
        medians.reserveCapacity(resamples)
        for _ in 0..<resamples {
            for r in 0..<n { counts[r] = 0 }
            for _ in 0..<n { counts[rank[Int(rng.next() % UInt64(n))]] += 1 }
            var r = 0, drawn = counts[0]
            while drawn <= middle {
                r += 1
                drawn += counts[r]
            }
            medians.append(sorted[r])
        }
        return medians
    }
}
