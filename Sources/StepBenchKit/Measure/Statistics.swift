import StepBenchScenarios

/// Order statistics over repetitions: median and a percentile-bootstrap 95% confidence
/// interval of the median. Deterministic: the resampling generator is seeded.
public enum Statistics {
    public static func median(_ values: [Double]) -> Double {
        precondition(!values.isEmpty, "median of no values")
        let s = values.sorted()
        let n = s.count
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
    }

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
    public static func bootstrapMedianCI(_ values: [Double], resamples: Int = 2_000,
                                         seed: UInt64 = 0x5EED) -> (low: Double, high: Double) {
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
