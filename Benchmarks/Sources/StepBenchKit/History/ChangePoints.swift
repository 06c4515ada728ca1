@_exported import StepBenchChangePoints

extension ChangePoints {
    /// The change points of `series` (its `key` seeds the permutations).
    public static func detect(_ series: HistorySeries, minEffect: Double, method: Method = Method()) -> Outcome {
        let key = "\(series.scenario.rawValue)|\(series.design.name)|\(series.threads)|\(series.metric.rawValue)"
        return detect(
            key: key, exact: series.exact, relative: series.tolerance?.relative, absolute: series.tolerance?.absolute,
            driftSD: series.driftSD,
            values: series.points.map(\.value), logs: series.points.map { $0.logs ?? [] }, minEffect: minEffect,
            method: method)
    }
}
