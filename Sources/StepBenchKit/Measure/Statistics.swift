import Foundation
import StepBenchScenarios
import Synchronization

/// Order statistics over repetitions: median and a percentile-bootstrap 95% confidence
/// interval of the median. Deterministic: the resampling generator is seeded.
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

/// The exact (infinite-resample) percentile bootstrap of a median and of a ratio of medians.
///
/// Resampling n values with replacement, the resampled median — taken as the k-th order
/// statistic, k = ⌈n/2⌉ (the lower median when n is even) — is at most x₍ⱼ₎ exactly when at least
/// k of the n draws are, so P(m* ≤ x₍ⱼ₎) = P(Binomial(n, j/n) ≥ k) = I_{j/n}(k, n−k+1) (Efron
/// 1982). That gives the bootstrap distribution of each median without Monte-Carlo error; the
/// ratio of two independent medians is then the convolution of the two, in log space, and its
/// quantiles are found by bisection. Deterministic, and cheap enough to repeat thousands of
/// times in the detector's synthetic trials (`DetectorTests`).
public struct MedianBootstrap: Sendable {
    /// The sample's median (``Statistics/median(_:)``: the ⌈n/2⌉-th order statistic, the very
    /// statistic whose bootstrap distribution this computes).
    public let median: Double
    /// log of the order statistics that carry probability, ascending, and their masses.
    public let logValues: [Double]
    public let masses: [Double]

    /// `values` must be positive (they are timings).
    public init(_ values: [Double]) {
        precondition(!values.isEmpty && values.allSatisfy { $0 > 0 }, "bootstrap of positive values only")
        // libc's qsort: the generic `sorted()` is unspecialised and slow in debug builds, where
        // the detector's synthetic trials run it tens of thousands of times.
        var sorted = values
        sorted.withUnsafeMutableBufferPointer { buffer in
            qsort(buffer.baseAddress!, buffer.count, MemoryLayout<Double>.stride) { a, b in
                let x = a!.load(as: Double.self), y = b!.load(as: Double.self)
                return x < y ? -1 : x > y ? 1 : 0
            }
        }
        median = Statistics.lowerMedian(ofSorted: sorted)
        let all = Self.orderStatisticMasses(n: sorted.count)
        var logs: [Double] = [], masses: [Double] = []
        for (j, mass) in all.enumerated() where mass > 1e-13 {
            logs.append(Foundation.log(sorted[j]))
            masses.append(mass)
        }
        logValues = logs
        self.masses = masses
    }

    /// P(m* = x₍ⱼ₎) for j = 1…n: depends on n alone, so it is computed once per n.
    static func orderStatisticMasses(n: Int) -> [Double] {
        if let cached = massCache.withLock({ $0[n] }) { return cached }
        let k = (n + 1) / 2
        var masses: [Double] = []
        masses.reserveCapacity(n)
        var previous = 0.0
        for j in 1...n {
            let cumulative = j == n ? 1 : Statistics.binomialUpperTail(n: n, p: Double(j) / Double(n), atLeast: k)
            masses.append(max(0, cumulative - previous))
            previous = cumulative
        }
        massCache.withLock { $0[n] = masses }
        return masses
    }

    private static let massCache = Mutex<[Int: [Double]]>([:])

    /// Standard deviation of the bootstrap distribution of log(median).
    public var logStandardDeviation: Double {
        let mean = zip(logValues, masses).reduce(0) { $0 + $1.0 * $1.1 }
        return zip(logValues, masses).reduce(0) { $0 + $1.1 * ($1.0 - mean) * ($1.0 - mean) }.squareRoot()
    }

    /// P(log m*_current − log m*_baseline ≤ t) for independent bootstraps.
    static func differenceCDF(baseline a: MedianBootstrap, current b: MedianBootstrap, _ t: Double) -> Double {
        var total = 0.0, j = 0, cumulativeB = 0.0
        for i in a.logValues.indices {  // a ascending, so a + t is too: one pass over b
            let limit = a.logValues[i] + t
            while j < b.logValues.count && b.logValues[j] <= limit {
                cumulativeB += b.masses[j]
                j += 1
            }
            total += a.masses[i] * cumulativeB
        }
        return total
    }

    /// The (low, high) quantiles at `tail` and 1 − `tail` of median(current) / median(baseline).
    public static func ratioInterval(baseline a: MedianBootstrap, current b: MedianBootstrap,
                                     tail: Double) -> (low: Double, high: Double) {
        func quantile(_ q: Double) -> Double {
            var lo = b.logValues.first! - a.logValues.last! - 1e-9, hi = b.logValues.last! - a.logValues.first! + 1e-9
            for _ in 0..<48 {  // the range is a few tenths in log space: 2⁻⁴⁸ of it is far below any digit shown
                let mid = (lo + hi) / 2
                if differenceCDF(baseline: a, current: b, mid) >= q { hi = mid } else { lo = mid }
            }
            return hi
        }
        return (exp(quantile(tail)), exp(quantile(1 - tail)))
    }
}

extension Statistics {
    /// P(Binomial(n, p) ≥ k) = I_p(k, n − k + 1), the regularised incomplete beta function.
    public static func binomialUpperTail(n: Int, p: Double, atLeast k: Int) -> Double {
        if k <= 0 { return 1 }
        if k > n { return 0 }
        return regularizedIncompleteBeta(x: p, a: Double(k), b: Double(n - k + 1))
    }

    /// I_x(a, b) by Lentz's continued fraction (Numerical Recipes, 3rd ed., §6.4).
    public static func regularizedIncompleteBeta(x: Double, a: Double, b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let logGammas: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let logPowers: Double = a * log(x) + b * log(1 - x)
        let logFront = logGammas + logPowers
        if x < (a + 1) / (a + b + 2) {
            return exp(logFront) * betaContinuedFraction(x: x, a: a, b: b) / a
        }
        return 1 - exp(logFront) * betaContinuedFraction(x: 1 - x, a: b, b: a) / b
    }

    private static func betaContinuedFraction(x: Double, a: Double, b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0, d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...10_000 {
            let m = Double(m), m2 = 2 * m
            var aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2))
            d = 1 + aa * d; if abs(d) < tiny { d = tiny }
            c = 1 + aa / c; if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))
            d = 1 + aa * d; if abs(d) < tiny { d = tiny }
            c = 1 + aa / c; if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-15 { break }
        }
        return h
    }

    /// The Student-t quantile with `degreesOfFreedom` (ν), by bisection on its CDF
    /// P(T ≤ t) = 1 − ½·I_{ν/(ν+t²)}(ν/2, ½) for t ≥ 0.
    public static func studentTQuantile(_ p: Double, degreesOfFreedom nu: Int) -> Double {
        precondition(p > 0 && p < 1 && nu >= 1, "t quantile of \(p) with \(nu) degrees of freedom")
        func cdf(_ t: Double) -> Double {
            let tail = 0.5 * regularizedIncompleteBeta(x: Double(nu) / (Double(nu) + t * t), a: Double(nu) / 2, b: 0.5)
            return t >= 0 ? 1 - tail : tail
        }
        var lo = -1e6, hi = 1e6
        for _ in 0..<200 {
            let mid = (lo + hi) / 2
            if cdf(mid) < p { lo = mid } else { hi = mid }
        }
        return (lo + hi) / 2
    }

    /// The standard normal quantile Φ⁻¹(p), by bisection on Φ (erfc): exact to ~1e-12.
    public static func normalQuantile(_ p: Double) -> Double {
        precondition(p > 0 && p < 1, "normal quantile of \(p)")
        var lo = -40.0, hi = 40.0
        for _ in 0..<100 {
            let mid = (lo + hi) / 2
            if 0.5 * erfc(-mid / 2.0.squareRoot()) < p { lo = mid } else { hi = mid }
        }
        return (lo + hi) / 2
    }
}
