import Foundation

/// What the gate checks of the package-benchmark suite (Benchmarks/Thresholds/<machine-id>/).
///
/// `swift package benchmark thresholds update` records every metric of every benchmark it runs,
/// and `thresholds check` checks every metric it finds in a file. The gate checks only what the
/// code alone decides: mallocCountTotal of the benchmarks whose allocation count is exact (the
/// catalog's `exactAllocations`, declared in ``ScenarioKind``). Wall clock is removed from every
/// file and the files of timing-dependent benchmarks are deleted: on shared VMs both follow the
/// neighbours and the schedule, so gating them fails unchanged trees (docs/METHOD.md says what
/// was seen). Both are still measured and printed by the suite.
public enum ThresholdPolicy {
    public static let gatedMetrics = ["mallocCountTotal"]
    static let prefix = "SteppingBenchmarks.", suffix = ".p90.json"

    /// The `--filter` of `swift package benchmark` that selects the benchmarks with exact
    /// counts (package-benchmark matches it as a regular expression).
    public static func filter(_ catalog: Catalog) -> String {
        "^(" + catalog.benchmarks.filter(\.exactAllocations).map(\.name).sorted().joined(separator: "|") + ")$"
    }

    /// Keeps `directory`'s threshold files to the policy: each exact benchmark's file holds only
    /// the gated metrics (rewritten atomically when it held more), every other file of the suite
    /// is deleted. Returns the benchmarks whose file was trimmed and those whose file was deleted,
    /// by name. Running it twice changes nothing the second time.
    public static func apply(to directory: URL, catalog: Catalog) throws -> (trimmed: [String], deleted: [String]) {
        let exact = Set(catalog.benchmarks.filter(\.exactAllocations).map(\.name))
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        } catch {
            throw ResultsError(
                .unreadable, "\(directory.path): cannot list the threshold files (\(error.localizedDescription))")
        }
        var trimmed: [String] = [], deleted: [String] = []
        for entry in entries where entry.hasPrefix(prefix) && entry.hasSuffix(suffix) {
            let name = String(entry.dropFirst(prefix.count).dropLast(suffix.count))
            let file = directory.appendingPathComponent(entry)
            guard exact.contains(name) else {
                try FileManager.default.removeItem(at: file)
                deleted.append(name)
                continue
            }
            guard let data = FileManager.default.contents(atPath: file.path),
                let metrics = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else {
                throw ResultsError(.wrongKind, "\(file.path): not a package-benchmark threshold file (a JSON object)")
            }
            guard metrics.keys.contains(where: { !gatedMetrics.contains($0) }) else { continue }
            var text = "{\n"
            let kept = metrics.keys.filter(gatedMetrics.contains).sorted()
            for (i, key) in kept.enumerated() {
                text += "  \"\(key)\": \(metrics[key]!)" + (i == kept.count - 1 ? "\n" : ",\n")
            }
            text += "}\n"
            try ResultsFile.writeAtomically(Data(text.utf8), to: file)
            trimmed.append(name)
        }
        return (trimmed, deleted)
    }

    /// What `swift package benchmark thresholds check` said, from its output: a regression
    /// (`benchmarkThresholdRegression`), an improvement only (it then exits non-zero too), or
    /// nothing beyond the exit status.
    public enum CheckOutcome: Equatable, Sendable {
        case passed, regression, improvementOnly
        case failed(status: Int32)

        public init(output: String, status: Int32) {
            if output.contains("benchmarkThresholdRegression") {
                self = .regression
            } else if status == 0 {
                self = .passed
            } else if output.contains("benchmarkThresholdImprovement") {
                self = .improvementOnly
            } else {
                self = .failed(status: status)
            }
        }
    }

    /// The lines of the plugin's output worth showing: not its build's progress, not blank.
    public static func shown(_ output: String, last: Int = 60) -> String {
        let noise = try! Regex(#"^\[[0-9]+/[0-9]+\]|^(Building|Build |Compiling|Write |Wrapping|Linking)"#)
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            !line.trimmingCharacters(in: .whitespaces).isEmpty && line.firstMatch(of: noise) == nil
        }
        return lines.suffix(last).joined(separator: "\n")
    }
}
