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
        var medians: [Double] = []
        medians.reserveCapacity(resamples)
        var sample = [Double](repeating: 0, count: values.count)
        for _ in 0..<resamples {
            for i in sample.indices { sample[i] = values[Int(rng.next() % UInt64(values.count))] }
            medians.append(median(sample))
        }
        return (quantile(medians, 0.025), quantile(medians, 0.975))
    }
}
