import Foundation

/// What the comparisons decide with, written once: `compare` (bootstrap intervals of one run
/// against another) and `paired` (Student-t intervals over adjacent processes) differ in their
/// interval, not in how a family of rows is decided from it.
extension Statistics {
    /// The two-sided p-value of "no change" given a row's interval at any tail (each side):
    /// twice the largest tail at which the interval still excludes 1, found by bisection in log
    /// space between 10⁻¹⁵ and ½ (the interval narrows as the tail grows); 1 when even the
    /// narrowest holds 1.
    public static func pValue(interval: (_ tail: Double) -> (low: Double, high: Double)) -> Double {
        func excludesOne(_ tail: Double) -> Bool {
            let (low, high) = interval(tail)
            return low > 1 || high < 1
        }
        guard excludesOne(0.5 - 1e-9) else { return 1 }
        var lo = log(1e-15), hi = log(0.5 - 1e-9)  // excludes at hi; below lo counts as 0
        if excludesOne(exp(lo)) { return 2 * exp(lo) }
        for _ in 0..<50 {
            let mid = (lo + hi) / 2
            if excludesOne(exp(mid)) { hi = mid } else { lo = mid }
        }
        return 2 * exp(hi)
    }

    /// Each tail of a two-sided decision interval when `family` tests share the family-wise
    /// rate `alpha` (Bonferroni): the tail of Holm's last step, and of a row outside the family.
    public static func bonferroniTail(alpha: Double, family: Int) -> Double {
        alpha / Double(max(1, family)) / 2
    }

    /// Holm's step-down over a family of two-sided `pValues` at family-wise rate `alpha`: each
    /// row's tail (each side) of its decision interval. Smallest p-value first, the k-th
    /// (from 0) is tested at `alpha / (m − k)` and gets that tail while the family keeps
    /// rejecting; from the first that does not, every row gets Bonferroni's `alpha / m`.
    public static func holmTails(_ pValues: [Double], alpha: Double) -> [Double] {
        let m = pValues.count
        var tails = [Double](repeating: bonferroniTail(alpha: alpha, family: m), count: m)
        for (k, i) in pValues.indices.sorted(by: { pValues[$0] < pValues[$1] }).enumerated() {
            let tail = alpha / Double(m - k) / 2
            if pValues[i] > 2 * tail { break }
            tails[i] = tail
        }
        return tails
    }

    /// The slowdown a decision interval would call a regression with 80% power, as a fraction,
    /// never below `minEffect`: the decision interval's half-width (in log space) plus
    /// z₀.₈ standard errors, the standard error read off the 95% interval.
    public static func detectableEffect(
        ratio: Double, decision: (low: Double, high: Double), ninetyFive: (low: Double, high: Double),
        minEffect: Double
    ) -> Double {
        let d = log(ratio)
        let h = max(log(decision.high) - d, d - log(decision.low))
        let sigma = max(log(ninetyFive.high) - d, d - log(ninetyFive.low)) / normalQuantile(0.975)
        return max(minEffect, exp(h + normalQuantile(0.8) * sigma) - 1)
    }

    /// How much a metric drifts between runs beyond what each run's own bootstrap sees, from the
    /// runs' log-medians and their bootstrap standard deviations: `betweenSD` (the standard
    /// deviation of the log-medians), `samplingSD` (the root mean square of the bootstrap's) and
    /// `driftSD = √max(0, between² − sampling²)`. `stepbench noise` measures a profile with it,
    /// and the calibration's synthetic A/A runs re-estimate it the same way.
    public static func driftEstimate(logMedians: [Double], logStandardDeviations: [Double]) -> (
        betweenSD: Double, samplingSD: Double, driftSD: Double
    ) {
        let mean = logMedians.reduce(0, +) / Double(logMedians.count)
        let between2 = logMedians.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(logMedians.count - 1)
        let sampling2 =
            logStandardDeviations.map { $0 * $0 }.reduce(0, +) / Double(logStandardDeviations.count)
        return (between2.squareRoot(), sampling2.squareRoot(), max(0, between2 - sampling2).squareRoot())
    }
}
