import Foundation
@_spi(StepBench) import SteppingConformance

/// Change points of a history's series (`stepbench history series`, `stepbench history detect`): where a row's
/// numbers moved between commits. scripts/history draws them and says what else changed there.
/// A module of its own, compiled optimised even in a debug build (the tests search thousands of
/// series; unoptimised, the sorts and the permutation tests took minutes).
///
/// Timing series: E-divisive means (Matteson & James 2014, α = 1; the method of MongoDB's
/// signal processing and of Apache Otava) on each run's value, the lower median of its
/// repetitions' logs, applied recursively (binary segmentation). A split is tested at level
/// ``Method/alpha`` on every order of its segment when it has at most ``Method/exactRuns`` runs
/// (an exact p-value), else on ``Method/permutations`` random orders drawn from a generator
/// seeded by the series and the segment (deterministic); each side spans at least
/// ``Method/minRegime`` runs; and the regime medians must differ by at least max(minimum
/// effect, ``Method/sigmas`` σ), σ being the split's own noise: the row's between-run drift
/// plus its runs' sampling noise. Change points whose adjacent regimes, after every split, no
/// longer differ by that much are dropped, the weakest first.
///
/// Exact series: any step beyond the gate's tolerance for the count between consecutive points
/// is a change point, p = 0 (a count fixed by the code does not move by chance).
public enum ChangePoints {
    /// The method's constants (docs/METHOD.md, "History"; changing one changes every answer).
    public struct Method: Codable, Equatable, Sendable {
        /// Random orders per test: the p-value's resolution is 1/(permutations + 1) = 0.001.
        public var permutations = 999
        /// A segment of at most this many runs is tested on all its n! orders (8! = 40,320): its
        /// p-value is exact. With 7 runs the smallest p is 2/C(7,3) = 0.057, with 8 it is 0.029.
        public var exactRuns = 8
        /// Level of each test (ecp's e.divisive default).
        public var alpha = 0.05
        /// A timing split must move the regime median by this many standard deviations of its
        /// own noise: the search looks at every split, so a lone 3σ would be crossed by chance.
        public var sigmas = 4.0
        /// A timing regime spans at least this many runs: one run alone is an outlier.
        public var minRegime = 2
        /// The variance of a normal sample's median is about (π/2)·σ²/m.
        public var medianVariance = Double.pi / 2
        /// σ from the median absolute deviation of a normal sample.
        public var madToSD = 1.4826

        public init() {}
    }

    /// One change point: the first point of the new regime.
    public struct Found: Codable, Equatable, Sendable {
        public var index: Int
        /// The old and new regimes' medians (exact: the previous and this point's values).
        public var before: Double
        public var after: Double
        public var pValue: Double
        /// Points in the adjacent regimes, before and after.
        public var regimes: [Int]
        /// Timing: the smallest relative change the split had to show (0.05 = 5%).
        public var threshold: Double?
    }

    /// What a series' search found: `status` "ok", "too-short" (too few points to test) or
    /// "no-drift-estimate" (a timing series with no drift estimate: its changes are listed,
    /// never called, as compare's rows of that verdict).
    public struct Outcome: Codable, Equatable, Sendable {
        public var status: String
        public var samplingSD: Double?
        public var changePoints: [Found]
    }

    /// The change points of a series given by its parts (`stepbench history detect`).
    public static func detect(
        key: String, exact: Bool, relative: Double?, absolute: Double?, driftSD: Double?, values: [Double],
        logs: [[Double]], minEffect: Double, method: Method = Method()
    ) -> Outcome {
        if exact {
            let found = exactSteps(values, relative: relative, absolute: absolute).map { i in
                Found(index: i, before: values[i - 1], after: values[i], pValue: 0, regimes: [1, 1], threshold: nil)
            }
            return Outcome(status: values.count < 2 ? "too-short" : "ok", samplingSD: nil, changePoints: found)
        }
        guard logs.count >= 2 * method.minRegime else {
            return Outcome(status: "too-short", samplingSD: nil, changePoints: [])
        }
        let (found, sd) = timing(logs, driftSD: driftSD ?? 0, key: key, minEffect: minEffect, method: method)
        return Outcome(status: driftSD == nil ? "no-drift-estimate" : "ok", samplingSD: sd, changePoints: found)
    }

    /// The indices where an exact count stepped beyond its tolerance (`relative`, else
    /// `absolute`; neither: any step) from the point before.
    public static func exactSteps(_ values: [Double], relative: Double?, absolute: Double?) -> [Int] {
        values.indices.dropFirst().filter { i in
            let (a, b) = (values[i - 1], values[i])
            if let relative { return a > 0 && abs(b / a - 1) > relative }
            return abs(b - a) > (absolute ?? 0)
        }
    }

    /// The change points of a timing series, each run given by its repetitions' logs, and the
    /// pooled σ of one repetition's log.
    public static func timing(
        _ logs: [[Double]], driftSD: Double, key: String, minEffect: Double, method: Method = Method()
    ) -> ([Found], Double) {
        let x = logs.map(lowerMedian)
        let sd = samplingSD(logs, method)
        let reps = logs.isEmpty ? 1 : Int(lowerMedian(logs.map { Double($0.count) }))
        // a run's value is the median of its repetitions: its sampling variance
        let noise = Noise(
            drift: driftSD, pointVariance: method.medianVariance * sd * sd / Double(max(1, reps)),
            minEffect: minEffect, method: method)
        var accepted: [Int: Double] = [:]
        var todo = [(0, x.count)]
        while let (start, end) = todo.popLast() {
            guard end - start >= 2 * method.minRegime else { continue }
            let segment = Array(x[start..<end])
            let taus = Array(method.minRegime...(segment.count - method.minRegime))
            let thresholds = taus.map { noise.threshold(Double($0), Double(segment.count - $0)) }
            var workspace = Workspace(segment.count)
            let (observed, tau) = gatedStatistic(segment, taus, thresholds, &workspace)
            guard observed.isFinite else { continue }
            // ties count against the split (a tolerance for the sums' rounding; Q may be slightly < 0)
            let tied = observed - 1e-9 * max(1, abs(observed))
            var asExtreme = 0, orders = 0, extra = 0
            if segment.count <= method.exactRuns {
                // every order, the observed one included: p = #{orders at least as extreme} / n!
                forEachPermutation(of: segment) { order in
                    orders += 1
                    if gatedStatistic(order, taus, thresholds, &workspace).0 >= tied { asExtreme += 1 }
                }
            } else {
                var random = SplitMix64(seed: UInt64(crc32("\(key)|\(start)|\(end)")))
                extra = 1  // the observed order, counted once (p is never 0)
                var order = segment
                for _ in 0..<method.permutations {
                    // Fisher–Yates in place: a uniform order whatever the order before it
                    for i in stride(from: order.count - 1, to: 0, by: -1) {
                        order.swapAt(i, Int(random.next() % UInt64(i + 1)))
                    }
                    orders += 1
                    if gatedStatistic(order, taus, thresholds, &workspace).0 >= tied { asExtreme += 1 }
                }
            }
            let p = Double(extra + asExtreme) / Double(orders + extra)
            guard p <= method.alpha else { continue }
            let split = start + tau
            accepted[split] = p
            todo += [(start, split), (split, end)]
        }
        // prune: a change point whose adjacent regimes no longer differ by its threshold, the weakest first
        while true {
            let cps = accepted.keys.sorted()
            let bounds = [0] + cps + [x.count]
            var weakest: (Int, Double)?
            for (i, cp) in cps.enumerated() {
                let before = Array(x[bounds[i]..<cp]), after = Array(x[cp..<bounds[i + 2]])
                let margin =
                    abs(median(after) - median(before)) - noise.threshold(Double(before.count), Double(after.count))
                if margin < 0 && (weakest == nil || margin < weakest!.1) { weakest = (cp, margin) }
            }
            guard let weakest else { break }
            accepted[weakest.0] = nil
        }
        let cps = accepted.keys.sorted()
        let bounds = [0] + cps + [x.count]
        let found = cps.enumerated().map { i, cp in
            let before = Array(x[bounds[i]..<cp]), after = Array(x[cp..<bounds[i + 2]])
            return Found(
                index: cp, before: exp(median(before)), after: exp(median(after)), pValue: accepted[cp]!,
                regimes: [before.count, after.count],
                threshold: expm1(noise.threshold(Double(before.count), Double(after.count))))
        }
        return (found, sd)
    }

    /// The split's noise: the smallest |log effect| a split into regimes of m1 and m2 runs must
    /// show. Each regime's median carries the between-run drift once (runs of one session drift
    /// together) plus its runs' sampling noise averaged over the regime.
    struct Noise {
        var drift: Double, pointVariance: Double, minEffect: Double, method: Method

        func threshold(_ m1: Double, _ m2: Double) -> Double {
            let sd = (2 * drift * drift + method.medianVariance * pointVariance * (1 / m1 + 1 / m2)).squareRoot()
            return max(log1p(minEffect), method.sigmas * sd)
        }
    }

    /// σ of one repetition's log, pooled over the runs: madToSD × the median absolute residual
    /// around each run's own (lower) median, leaving out that median's own residual.
    static func samplingSD(_ logs: [[Double]], _ method: Method) -> Double {
        var residuals: [Double] = []
        for run in logs where run.count >= 2 {
            let center = lowerMedian(run)
            var own = run.map { $0 - center }
            if let zero = own.firstIndex(of: 0) { own.remove(at: zero) }  // the median's own residual
            residuals += own.map(abs)
        }
        return residuals.isEmpty ? 0 : method.madToSD * median(residuals)
    }

    /// Buffers for one segment's search, reused for every order tried (a history tries up to
    /// 40,320 orders of a segment: allocating per order costs more than the arithmetic).
    struct Workspace {
        /// Row-major (n+1)²: s[a·(n+1)+b] is the sum of |x_i − x_j| over i < a, j < b.
        var sums: [Double]
        var sorted: [Double]
        /// The median of x[..<t] and of x[t...], by t.
        var prefixMedian: [Double]
        var suffixMedian: [Double]

        init(_ n: Int) {
            sums = [Double](repeating: 0, count: (n + 1) * (n + 1))
            sorted = [Double](repeating: 0, count: n)
            prefixMedian = [Double](repeating: 0, count: n + 1)
            suffixMedian = [Double](repeating: 0, count: n + 1)
        }
    }

    /// The largest E-divisive statistic Q(τ) over the splits whose regime medians differ by at
    /// least their threshold (−∞ if none), and that τ (the first, among equals). The permutation
    /// test uses this same statistic, so its p-value is that of the gated search itself.
    ///
    /// Q(τ) (Matteson & James 2014, α = 1) = m1·m2/n · (2/(m1·m2)·Σ|a−b| − Σ_pairs|a−a'|/C(m1,2)
    /// − Σ_pairs|b−b'|/C(m2,2)), a over the first τ values, b over the rest (a regime of one
    /// value has no pairs: its term is 0).
    static func gatedStatistic(
        _ x: [Double], _ taus: [Int], _ thresholds: [Double], _ w: inout Workspace
    ) -> (Double, Int) {
        let n = x.count
        // every prefix's and suffix's median, by insertion into a sorted buffer
        func insert(_ value: Double, count: Int) {
            var i = count
            while i > 0 && w.sorted[i - 1] > value {
                w.sorted[i] = w.sorted[i - 1]
                i -= 1
            }
            w.sorted[i] = value
        }
        func middle(_ count: Int) -> Double {
            count % 2 == 1 ? w.sorted[count / 2] : (w.sorted[count / 2 - 1] + w.sorted[count / 2]) / 2
        }
        for t in 0..<n {
            insert(x[t], count: t)
            w.prefixMedian[t + 1] = middle(t + 1)
        }
        for (k, t) in (0..<n).reversed().enumerated() {
            insert(x[t], count: k)
            w.suffixMedian[t] = middle(k + 1)
        }
        var passing = [Bool](repeating: false, count: taus.count)
        for k in taus.indices {
            passing[k] = abs(w.suffixMedian[taus[k]] - w.prefixMedian[taus[k]]) >= thresholds[k] - 1e-12
        }
        guard passing.contains(true) else { return (-.infinity, taus[0]) }
        let width = n + 1
        for i in 0..<n {
            var row = 0.0
            for j in 0..<n {
                row += abs(x[i] - x[j])
                w.sums[(i + 1) * width + j + 1] = w.sums[i * width + j + 1] + row
            }
        }
        var best = (-Double.infinity, taus[0])
        for k in taus.indices where passing[k] {
            let t = taus[k]
            let (m1, m2) = (Double(t), Double(n - t))
            let withinA = w.sums[t * width + t] / 2
            let withinB = (w.sums[n * width + n] - 2 * w.sums[t * width + n] + w.sums[t * width + t]) / 2
            let between = w.sums[t * width + n] - w.sums[t * width + t]
            let (pairsA, pairsB) = (max(m1 * (m1 - 1) / 2, 1), max(m2 * (m2 - 1) / 2, 1))
            let q = m1 * m2 / Double(n) * (2 * between / (m1 * m2) - withinA / pairsA - withinB / pairsB)
            if q > best.0 { best = (q, t) }
        }
        return best
    }

    /// Calls `body` with every order of `values` (Heap's algorithm: n! orders).
    static func forEachPermutation(of values: [Double], _ body: ([Double]) -> Void) {
        var a = values
        var c = [Int](repeating: 0, count: a.count)
        body(a)
        var i = 0
        while i < a.count {
            if c[i] < i {
                a.swapAt(i % 2 == 0 ? 0 : c[i], i)
                body(a)
                c[i] += 1
                i = 0
            } else {
                c[i] = 0
                i += 1
            }
        }
    }

    /// The ⌈n/2⌉-th order statistic: StepBench's median of repetitions.
    static func lowerMedian(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s[(s.count - 1) / 2]
    }

    /// The ordinary median (the middle two averaged) of a regime: a regime often holds an even,
    /// small number of runs, and the lower median of two runs is their minimum, a biased estimate.
    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// zlib's CRC-32 of `text`'s UTF-8 bytes.
    static func crc32(_ text: String) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in text.utf8 {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// `stepbench history detect`'s input: series given by their parts.
    public struct Request: Sendable {
        public struct Series: Sendable {
            public var key: String
            public var exact: Bool
            public var driftSD: Double?
            /// An exact series' tolerance: relative, else absolute.
            public var relative: Double?
            public var absolute: Double?
            public var values: [Double]
            public var logs: [[Double]]?
        }
        public var minEffect: Double
        public var sigmas: Double?
        public var series: [Series]

        struct Malformed: Error, CustomStringConvertible {
            var description: String
        }

        /// Read with JSONSerialization, here: a test's request holds millions of numbers, which
        /// Codable's generic decoding, unoptimised in a debug build, takes seconds over.
        public init(json data: Data) throws {
            guard let top = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                let minEffect = (top["minEffect"] as? NSNumber)?.doubleValue,
                let series = top["series"] as? [[String: Any]]
            else { throw Malformed(description: "expected an object with minEffect and series") }
            func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }
            func numbers(_ value: Any?) -> [Double]? { (value as? [NSNumber])?.map(\.doubleValue) }
            self.minEffect = minEffect
            sigmas = number(top["sigmas"])
            self.series = try series.enumerated().map { i, s in
                guard let key = s["key"] as? String, let exact = s["exact"] as? Bool, let values = numbers(s["values"])
                else { throw Malformed(description: "series \(i): expected key, exact and values") }
                let tolerance = s["tolerance"] as? [String: Any]
                let logs = try (s["logs"] as? [Any]).map { runs in
                    try runs.map { run in
                        guard let run = numbers(run) else {
                            throw Malformed(description: "series \(i): logs must be lists of numbers")
                        }
                        return run
                    }
                }
                return Series(
                    key: key, exact: exact, driftSD: number(s["driftSD"]), relative: number(tolerance?["relative"]),
                    absolute: number(tolerance?["absolute"]), values: values, logs: logs)
            }
        }
    }
}
