import Foundation

/// The special functions StepBench's statistics need: the binomial tail (the exact bootstrap's
/// order-statistic masses) through the regularised incomplete beta function, and the Student-t
/// and normal quantiles (`compare`'s drift allowance).
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

    /// The geometric mean of `exp(logs)` and its two-sided Student-t interval, `tail` on each
    /// side: the interval of the mean log ratio of paired samples (`paired`, `rank`). Needs two
    /// values or more.
    public static func studentTInterval(ofLogs logs: [Double], tail: Double) -> (
        center: Double, low: Double, high: Double
    ) {
        let n = Double(logs.count), mean = logs.reduce(0, +) / n
        let sd = (logs.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)).squareRoot()
        let h = studentTQuantile(1 - tail, degreesOfFreedom: logs.count - 1) * sd / n.squareRoot()
        return (exp(mean), exp(mean - h), exp(mean + h))
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
