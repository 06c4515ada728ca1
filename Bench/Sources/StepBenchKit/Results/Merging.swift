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
        guard let first = files.first else { throw ResultsError("merge: no results files given") }
        for file in files {
            guard file.machine.machineID == first.machine.machineID else {
                throw ResultsError(
                    "merge: files from different machine kinds (\(first.machine.machineID), \(file.machine.machineID))")
            }
            guard file.aggregation == nil else {
                throw ResultsError("merge: a file is already merged (\(file.aggregation!)); merge the runs themselves")
            }
            // each process has its own order
            func shape(_ c: Configuration) -> Configuration { var c = c; c.orderSeed = nil; return c }
            guard file.machine.gitCommit == first.machine.gitCommit, file.machine.gitDirty == first.machine.gitDirty,
                shape(file.configuration) == shape(first.configuration)
            else {
                throw ResultsError(
                    "merge: the runs come from different builds or configurations (commit \(first.machine.gitCommit.prefix(10)) vs \(file.machine.gitCommit.prefix(10))); merge the processes of one build and one configuration"
                )
            }
            guard Set(file.rows.map(\.key)) == Set(first.rows.map(\.key)) else {
                throw ResultsError("merge: the runs measured different combinations; merge runs of one configuration")
            }
            for row in file.rows {
                guard let other = first.row(row.key), other.elements != row.elements else { continue }
                throw ResultsError(
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
        merged.aggregation =
            "per-process medians of \(files.count) runs of \(first.configuration.repetitions) repetitions"
        merged.createdAt = ISO8601DateFormatter().string(from: Date())
        merged.peakRSSBytes = files.map(\.peakRSSBytes).max() ?? 0
        merged.computeRatios()
        return merged
    }

    /// `stepbench merge --combine`: one file holding every row and profile of `files`, each as
    /// measured, e.g. runs of different scenarios or element counts and a `stepbench profile`
    /// file (the CI gate's current state). The files must come from one build on one machine
    /// kind and measure each (scenario, design, threads) row and each profile once. The machine,
    /// configuration and time are the first file's; ratios and warnings stay as each run
    /// computed them.
    public static func combined(_ files: [ResultsFile]) throws -> ResultsFile {
        guard let first = files.first else { throw ResultsError("merge: no results files given") }
        var rows: Set<RowKey> = [], profiles: Set<String> = []
        var combined = first
        combined.rows = []
        combined.profiles = nil
        combined.paths = nil
        combined.harnessWarnings = nil
        for file in files {
            guard file.machine.machineID == first.machine.machineID else {
                throw ResultsError(
                    "merge: files from different machine kinds (\(first.machine.machineID), \(file.machine.machineID))")
            }
            guard file.machine.gitCommit == first.machine.gitCommit, file.machine.gitDirty == first.machine.gitDirty,
                file.machine.buildConfiguration == first.machine.buildConfiguration
            else {
                throw ResultsError(
                    "merge: the files come from different builds (commit \(first.machine.gitCommit.prefix(10)) vs \(file.machine.gitCommit.prefix(10))); combine the runs of one build"
                )
            }
            for row in file.rows {
                guard rows.insert(row.key).inserted else {
                    throw ResultsError("merge: \(row.key) is measured by more than one file")
                }
                combined.rows.append(row)
            }
            for profile in file.profiles ?? [] {
                let key = "\(profile.scenario.rawValue) \(profile.design)"
                guard profiles.insert(key).inserted else {
                    throw ResultsError("merge: the profile of \(key) is in more than one file")
                }
                combined.profiles = (combined.profiles ?? []) + [profile]
            }
            for path in file.paths ?? [] {
                let key = "path \(path.path.rawValue) \(path.design)"
                guard profiles.insert(key).inserted else {
                    throw ResultsError("merge: the \(key) is in more than one file")
                }
                combined.paths = (combined.paths ?? []) + [path]
            }
            if let warnings = file.harnessWarnings {
                combined.harnessWarnings = (combined.harnessWarnings ?? []) + warnings
            }
            combined.peakRSSBytes = max(combined.peakRSSBytes, file.peakRSSBytes)
        }
        return combined
    }
}
