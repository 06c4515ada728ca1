import StepBenchScenarios
@_spi(Measurement) import Stepping

extension Comparison {
    public static func compare(
        baseline: ResultsFile, current: ResultsFile, minEffect: Double = defaultMinEffect,
        noise: NoiseProfile? = nil
    ) -> Comparison {
        let base = Dictionary(baseline.rows.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        var rows: [Row] = []
        var timings: [TimingCandidate] = []
        var seen = Set<RowKey>()
        let cores = current.machine.cores
        for cur in current.rows {
            seen.insert(cur.key)
            guard let old = base[cur.key], old.status == .ok, !old.repetitions.isEmpty else {
                rows.append(Row(cur.key, .all, exact: false, .onlyInCurrent))
                continue
            }
            guard cur.status == .ok, !cur.repetitions.isEmpty else {
                rows.append(Row(cur.key, .verification, exact: true, .failed))
                continue
            }
            let oldSamples = Dictionary(
                timingSamples(old, in: baseline).map { ($0.metric, $0.samples) }, uniquingKeysWith: { a, _ in a })
            let newSamples = timingSamples(cur, in: current).filter { oldSamples[$0.metric] != nil }
            let primary = primaryMetric(cur.scenario, among: newSamples.map(\.metric))
            let oversubscribed = cores > 0 && cur.threads > cores
            for (name, b) in newSamples {
                var r = Row(cur.key, name, exact: false, .information)
                r.oversubscribed = oversubscribed ? true : nil
                timings.append(
                    TimingCandidate(
                        index: rows.count, baseline: oldSamples[name]!, current: b,
                        driftSD: noise?.driftSD(MeasureKey(cur.key, name)),
                        decided: name == primary && !oversubscribed && !cur.scenario.isFloor))
                rows.append(r)
            }
            rows += exactCountRows(old, cur)
        }
        // A row the current file no longer measures: exact when the baseline gated its count.
        for old in baseline.rows where !seen.contains(old.key) {
            rows.append(Row(old.key, .all, exact: old.allocationsExact == true, .onlyInBaseline))
        }
        let decided = decideTimings(timings, into: &rows, noise: noise, minEffect: minEffect)
        let oldProfiles = Dictionary((baseline.profiles ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let newProfiles = Set((current.profiles ?? []).map(\.key))
        for old in baseline.profiles ?? [] where !newProfiles.contains(old.key) {
            rows.append(Row(exact: old.key, .instructionsPerElement, old.instructionsPerElement, nil, .onlyInBaseline))
        }
        for p in current.profiles ?? [] {
            let before = oldProfiles[p.key]?.instructionsPerElement
            rows.append(
                Row(
                    exact: p.key, .instructionsPerElement, before, p.instructionsPerElement,
                    before.map { instructionVerdict($0, p.instructionsPerElement, design: p.design) } ?? .onlyInCurrent)
            )
        }
        rows += pathRows(baseline, current)
        return Comparison(
            baselineCommit: baseline.machine.gitCommit, currentCommit: current.machine.gitCommit,
            minEffect: minEffect, decisionLevel: 1 - 2 * decisionTail(comparisons: decided),
            noiseProfile: noise?.machineId, rows: rows, attributions: attributions(baseline, current))
    }

    /// The rows of counts the code fixes, for one row measured in both files: allocations per
    /// element where the scenario declares them exact (an increase beyond its tolerance is a
    /// regression), and the contention counters of a counting pass where one thread runs a
    /// design that delivers synchronously (nothing can contend, so each must stay where it is,
    /// within ``contentionTolerance``).
    /// The element counts a row's repetitions counted their allocations over.
    static func countedOver(_ row: ResultsFile.Row) -> Set<Int> {
        Set(row.repetitions.map { $0.countedElements ?? $0.elements })
    }

    static func exactCountRows(_ old: ResultsFile.Row, _ cur: ResultsFile.Row) -> [Row] {
        func exact(_ metric: Metric, _ a: Double, _ b: Double, tolerance: Double) -> Row {
            Row(exact: cur.key, metric, a, b, exactVerdict(a, b, tolerance: tolerance))
        }
        var rows: [Row] = []
        if allocationsAreExact(cur) {
            let tolerance = allocationTolerance(of: cur.key)
            var row = exact(
                .allocationsPerElement, Statistics.median(old.repetitions.map(\.allocationsPerElement)),
                Statistics.median(cur.repetitions.map(\.allocationsPerElement)), tolerance: tolerance)
            // Counted over other elements (a run sized the row down at its warm-up), a
            // repetition's fixed set-up shows per element at another rate: shown, not held.
            if countedOver(old) != countedOver(cur) { row.verdict = .information }
            rows.append(row)
        }
        if contentionIsExact(cur) {
            for (metric, count) in Metric.contention {
                guard let a = contentionPerElement(old, count), let b = contentionPerElement(cur, count) else {
                    continue
                }
                rows.append(exact(metric, a, b, tolerance: contentionTolerance))
            }
        }
        return rows
    }
}
