import StepBenchScenarios

extension Comparison.Row {
    /// A row of `key`'s combination whose verdict needs no numbers: measured in one file only,
    /// a failed verification, or a timing that waits for its decision.
    init(_ key: RowKey, _ metric: Metric, exact: Bool, _ verdict: Comparison.Verdict) {
        self.init(
            key: MeasureKey(key, metric), exact: exact, baseline: nil, current: nil, ratio: nil, ciLow: nil,
            ciHigh: nil, verdict: verdict)
    }

    /// A row of an exact count of `key`'s combination; either side may be missing.
    init(exact key: RowKey, _ metric: Metric, _ baseline: Double?, _ current: Double?, _ verdict: Comparison.Verdict) {
        self.init(exact: MeasureKey(key, metric), baseline, current, verdict)
    }

    /// A row of an exact count of a path driver's subject (the scenario column names the path).
    init(
        path: StepPath, _ subject: Subject, _ metric: Metric, _ baseline: Double?, _ current: Double?,
        _ verdict: Comparison.Verdict
    ) {
        self.init(exact: MeasureKey(path: path, subject, metric), baseline, current, verdict)
    }

    private init(exact key: MeasureKey, _ baseline: Double?, _ current: Double?, _ verdict: Comparison.Verdict) {
        let ratio = baseline.flatMap { a in current.flatMap { b in a > 0 ? b / a : nil } }
        self.init(
            key: key, exact: true, baseline: baseline, current: current, ratio: ratio, ciLow: nil, ciHigh: nil,
            verdict: verdict)
    }
}

extension Comparison {
    /// The rule of every count fixed by the code and compared absolutely (allocations and
    /// synchronising instructions per event, contention counters): more than `tolerance` up is a
    /// regression, down an improvement.
    static func exactVerdict(_ a: Double, _ b: Double, tolerance: Double) -> Verdict {
        b - a > tolerance ? .regression : a - b > tolerance ? .improvement : .unchanged
    }
}
