import Foundation
import Synchronization

/// The exact (infinite-resample) percentile bootstrap of a median and of a ratio of medians.
///
/// Resampling n values with replacement, the resampled median — taken as the k-th order
/// statistic, k = ⌈n/2⌉ (the lower median when n is even) — is at most x₍ⱼ₎ exactly when at least
/// k of the n draws are, so P(m* ≤ x₍ⱼ₎) = P(Binomial(n, j/n) ≥ k) = I_{j/n}(k, n−k+1) (Efron
/// 1982). That gives the bootstrap distribution of each median without Monte-Carlo error; the
/// ratio of two independent medians is then the convolution of the two, in log space, and its
/// quantiles are found by bisection. Deterministic, and cheap enough to repeat thousands of
/// times in the detector's synthetic trials (``DetectorCalibration``).
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
    public static func ratioInterval(
        baseline a: MedianBootstrap, current b: MedianBootstrap,
        tail: Double
    ) -> (low: Double, high: Double) {
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
