import StepBenchScenarios
@_spi(Measurement) import Stepping

extension Comparison {
    /// Every timing metric of `row` with its per-repetition samples: the raw metrics, and
    /// `ns_per_element_vs_floor` when `file` holds the row's floor (``ResultsFile/floorRow(of:)``)
    /// with as many repetitions
    /// (repetition i of the design is paired with repetition i of the floor).
    public static func timingSamples(_ row: ResultsFile.Row, in file: ResultsFile) -> [(
        metric: Metric, samples: [Double]
    )] {
        guard row.status == .ok, !row.repetitions.isEmpty else { return [] }
        var result: [(metric: Metric, samples: [Double])] = []
        for (name, value) in timingMetrics {
            let samples = row.repetitions.compactMap(value)
            if samples.count == row.repetitions.count && samples.allSatisfy({ $0 > 0 }) {
                result.append((name, samples))
            }
        }
        if !allocationsAreExact(row), let samples = allocationSamples(row) {
            result.append((.allocationsPerElement, samples))  // a count that follows thread timing
        }
        if let side = row.scenario.sideMetric {
            let samples = row.repetitions.compactMap { r in r.sideEvents.map { Double($0) / Double(r.elements) } }
            if samples.count == row.repetitions.count && samples.allSatisfy({ $0 > 0 }) {
                result.append((side, samples))
            }
        }
        for (metric, count) in [
            (Metric.voluntarySwitchesPerElement, { (s: SchedulingCounts) in s.voluntarySwitches }),
            (.involuntarySwitchesPerElement, { $0.involuntarySwitches }),
        ] {
            let samples = row.repetitions.compactMap { r in r.scheduling.map { Double(count($0)) / Double(r.elements) }
            }
            if samples.count == row.repetitions.count && samples.allSatisfy({ $0 > 0 }) {
                result.append((metric, samples))
            }
        }
        if !contentionIsExact(row) {  // counts under real threads vary from run to run, like timings
            let counted = row.repetitions.prefix(row.contentionRepetitions ?? 0)
            for (metric, count) in Metric.contention {
                let samples = counted.compactMap { r in r.contentionPerElement(count) }
                if !samples.isEmpty && samples.count == counted.count && samples.allSatisfy({ $0 > 0 }) {
                    result.append((metric, samples))
                }
            }
        }
        // every repetition of the row with its floor's of the same round (rows of a run without
        // added rounds: as many as the row has, index by index)
        if let floorRow = file.floorRow(of: row), floorRow.status == .ok,
            case let rounds = RepetitionResult.sameRounds(row.repetitions, floorRow.repetitions),
            rounds.count == row.repetitions.count,
            floorRow.repetitions.count == row.repetitions.count || row.repetitions.contains(where: { $0.round != nil })
        {
            let paired = rounds.map { $0.nsPerElement / $1.nsPerElement }
            if paired.allSatisfy({ $0 > 0 && $0.isFinite }) { result.append((.nsPerElementVsFloor, paired)) }
        }
        return result
    }
    /// Whether `row`'s allocation count is fixed by the code: what the row says (stepbench/2),
    /// else the scenario's declaration (stepbench/1 rows carry no flag).
    public static func allocationsAreExact(_ row: ResultsFile.Row) -> Bool {
        row.allocationsExact ?? row.scenario.allocationsAreExact(for: row.design)
    }

    /// The allocations per element of `row`'s repetitions that carry their own count (repeats
    /// would narrow an interval), compared like a timing where the count follows thread timing;
    /// nil when one is 0 (a timing needs positive samples).
    public static func allocationSamples(_ row: ResultsFile.Row) -> [Double]? {
        let samples = row.repetitions.prefix(row.allocationRepetitions ?? row.repetitions.count).map(
            \.allocationsPerElement)
        return samples.allSatisfy({ $0 > 0 }) ? Array(samples) : nil
    }
}
