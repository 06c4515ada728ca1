@_exported import StepBenchChangePoints

extension ChangePoints {
    /// The change points of `series` (its key's label seeds the permutations).
    public static func detect(_ series: HistorySeries, minEffect: Double, method: Method = Method()) -> Outcome {
        detect(
            key: series.key.label, exact: series.exact, relative: series.tolerance?.relative,
            absolute: series.tolerance?.absolute,
            driftSD: series.driftSD,
            values: series.points.map(\.value), logs: series.points.map { $0.logs ?? [] }, minEffect: minEffect,
            method: method)
    }
}
