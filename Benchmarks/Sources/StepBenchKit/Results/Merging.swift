import Foundation
import StepBenchScenarios

/// `stepbench merge`: several results files into one, in one of two ways.
extension ResultsFile {
    /// `stepbench merge`: one file whose repetitions are whole processes. Each input file (one
    /// `stepbench run` process) becomes one repetition per row, holding that process's medians
    /// (time, CPU time, allocations and, with latency, each percentile). Comparing such files
    /// treats the process as the unit, which is what varies between runs: a process's heap and
    /// code layout and the neighbours during its life. `scripts/abtest` interleaves the
    /// processes of two builds and compares their merged files.
    public static func mergedPerProcess(_ files: [ResultsFile]) throws -> ResultsFile {
        guard let first = files.first else { throw ResultsError(.missingInput, "merge: no results files given") }
        for file in files {
            guard file.machine.machineID == first.machine.machineID else {
                throw ResultsError(
                    .incompatible,
                    "merge: files from different machine kinds (\(first.machine.machineID), \(file.machine.machineID))")
            }
            switch file.kind {
            case .run: break
            case .merged:
                throw ResultsError(
                    .wrongKind,
                    "merge: a file is already merged (\(file.aggregation ?? "merged")); merge the runs themselves")
            case .profile, .combination:
                throw ResultsError(
                    .wrongKind,
                    "merge: a file is a \(file.kind.rawValue), not a run; merge the runs of `stepbench run` (combine files with `merge --combine`)"
                )
            }
            // each process has its own order
            func shape(_ c: Configuration) -> Configuration { var c = c; c.orderSeed = nil; return c }
            guard file.machine.gitCommit == first.machine.gitCommit, file.machine.gitDirty == first.machine.gitDirty,
                shape(file.configuration) == shape(first.configuration)
            else {
                throw ResultsError(
                    .incompatible,
                    "merge: the runs come from different builds or configurations (commit \(first.machine.gitCommit.prefix(10)) vs \(file.machine.gitCommit.prefix(10))); merge the processes of one build and one configuration"
                )
            }
            guard Set(file.rows.map(\.key)) == Set(first.rows.map(\.key)) else {
                throw ResultsError(
                    .incompatible, "merge: the runs measured different combinations; merge runs of one configuration")
            }
            for row in file.rows {
                guard let other = first.row(row.key), other.elements != row.elements else { continue }
                throw ResultsError(
                    .incompatible,
                    "merge: the runs ran \(row.key) over different elements (\(other.elements), \(row.elements)): each sized it to the repetition budget at its own warm-up; run them with --elements, or --repetition-budget 0"
                )
            }
        }
        func median(_ values: [UInt64]) -> UInt64 { UInt64(Statistics.median(values.map { Double($0) }).rounded()) }
        var merged = first
        merged.rows = first.rows.map { row in
            var out = row
            out.repetitions = []
            out.failure = nil
            for file in files {
                let r = file.row(row.key)!
                guard r.status == .ok, !r.repetitions.isEmpty else {
                    if out.status == .ok || r.status.isFault { out.status = r.status == .ok ? .failed : r.status }
                    out.failure = out.failure ?? r.failure ?? "failed in one process"
                    continue
                }
                let reps = r.repetitions
                if reps.count == 1 {  // one repetition per process (a forked run): keep all it recorded
                    out.repetitions.append(reps[0])
                    continue
                }
                let latency: LatencySummary? =
                    reps.allSatisfy { $0.latency != nil }
                    ? {
                        let l = reps.map { $0.latency! }
                        return LatencySummary(
                            count: median(l.map(\.count)), p50: median(l.map(\.p50)), p90: median(l.map(\.p90)),
                            p99: median(l.map(\.p99)), p999: median(l.map(\.p999)),
                            p9999: median(l.map(\.p9999)), max: median(l.map(\.max)))
                    }() : nil
                var merged = RepetitionResult(
                    elapsedNanoseconds: median(reps.map(\.elapsedNanoseconds)), elements: reps[0].elements,
                    allocations: median(reps.map(\.allocations)),
                    cpuNanoseconds: median(reps.map(\.cpuNanoseconds)),
                    latency: latency)
                merged.countedElements = reps[0].countedElements
                out.repetitions.append(merged)
            }
            if out.status != .ok { out.repetitions = [] }
            out.summary = out.status == .ok ? Summary(out.repetitions, side: out.scenario.sideMetric) : nil
            return out
        }
        merged.configuration.repetitions = files.count
        merged.configuration.orderSeed = nil
        merged.declaredKind = .merged
        merged.aggregation =
            "per-process medians of \(files.count) runs of \(first.configuration.repetitions) repetitions"
        merged.createdAt = ISO8601DateFormatter().string(from: Date())
        merged.peakRSSBytes = files.map(\.peakRSSBytes).max() ?? 0
        merged.computeRatios()
        return merged
    }

    /// `stepbench merge --combine`: one file holding every row, profile and path of `files`,
    /// each as measured, e.g. runs of different scenarios or element counts and a `stepbench
    /// profile` file (the CI gate's current state, a report's inputs). The files must come from
    /// one machine kind and measure each (scenario, design, threads) row, each profile and each
    /// path once; and from one build unless `acrossBuilds` (the report's inputs may hold a
    /// profile of another commit; each row is still shown as its file measured it). `names`
    /// (the files' paths, in order) name the files in a refusal. The machine, configuration,
    /// catalog and time are the first file's with rows (else the first's); ratios stay as each run computed them; warnings
    /// and cost splits (each file's, from its own paths) are concatenated.
    public static func combined(_ files: [ResultsFile], names: [String]? = nil, acrossBuilds: Bool = false) throws
        -> ResultsFile
    {
        guard let first = files.first else { throw ResultsError(.missingInput, "merge: no results files given") }
        func name(_ i: Int) -> String { names.map { i < $0.count ? $0[i] : "file \(i + 1)" } ?? "file \(i + 1)" }
        var rows: [RowKey: Int] = [:], counted: [MeasureKey: Int] = [:]
        // a profile's configuration is a placeholder: the first file with rows describes them
        var combined = files.first { $0.kind != .profile } ?? first
        combined.declaredKind = .combination
        combined.rows = []
        combined.profiles = nil
        combined.paths = nil
        combined.harnessWarnings = nil
        combined.costSplits = nil
        for (i, file) in files.enumerated() {
            guard file.machine.machineID == first.machine.machineID else {
                throw ResultsError(
                    .incompatible,
                    "merge: \(name(i)) comes from machine kind \(file.machine.machineID), \(name(0)) from \(first.machine.machineID); combine one machine kind at a time"
                )
            }
            guard
                acrossBuilds
                    || (file.machine.gitCommit == first.machine.gitCommit
                        && file.machine.gitDirty == first.machine.gitDirty
                        && file.machine.buildConfiguration == first.machine.buildConfiguration)
            else {
                throw ResultsError(
                    .incompatible,
                    "merge: the files come from different builds (commit \(first.machine.gitCommit.prefix(10)) vs \(file.machine.gitCommit.prefix(10))); combine the runs of one build"
                )
            }
            func once(_ seen: Int?, _ what: String) throws {
                guard let seen else { return }
                throw ResultsError(
                    .incompatible,
                    "merge: \(what) is measured by both \(name(seen)) and \(name(i)); combine each measurement once (compare two measurements with `stepbench compare`)"
                )
            }
            for row in file.rows {
                try once(rows[row.key], "\(row.key)")
                rows[row.key] = i
                combined.rows.append(row)
            }
            for profile in file.profiles ?? [] {
                let key = MeasureKey(profile.key, .instructionsPerElement)
                try once(counted[key], "the profile of \(profile.scenario.rawValue) \(profile.design)")
                counted[key] = i
                combined.profiles = (combined.profiles ?? []) + [profile]
            }
            for path in file.paths ?? [] {
                let key = MeasureKey(path: path.path, path.design, .instructionsPerEvent)  // a path row's counts
                try once(counted[key], "path \(path.path.rawValue) \(path.design)")
                counted[key] = i
                combined.paths = (combined.paths ?? []) + [path]
            }
            if let warnings = file.harnessWarnings {
                combined.harnessWarnings = (combined.harnessWarnings ?? []) + warnings
            }
            if let splits = file.costSplits { combined.costSplits = (combined.costSplits ?? []) + splits }
            combined.peakRSSBytes = max(combined.peakRSSBytes, file.peakRSSBytes)
        }
        return combined
    }
}
