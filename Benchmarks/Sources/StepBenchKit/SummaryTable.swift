import Foundation
import StepBenchScenarios

/// The human summary of a results file, grouped by scenario (what `stepbench run` prints).
public enum SummaryTable {
    public static func render(_ file: ResultsFile) -> String {
        var out =
            "StepBench \(file.configuration.preset.rawValue) — \(file.machine.cpuModel), \(file.machine.cores) cores, \(file.machine.buildConfiguration), commit \(file.machine.gitCommit.prefix(10))\(file.machine.gitDirty ? "+dirty" : "")\n"
        out +=
            "medians of \(file.configuration.repetitions) repetitions; [95% CI]; ×seed and ×floor are ratios of median ns/element\n"
        for scenario in ScenarioKind.allCases {
            let rows = file.rows.filter { $0.scenario == scenario }
            guard !rows.isEmpty else { continue }
            out += "\n\(scenario.rawValue): \(scenario.summary)\n"
            var table = [["design", "threads", "ns/elem", "[95% CI]", "Melem/s", "allocs/elem", "cpu ns/elem"]]
            if scenario.hasLatency { table[0] += ["p50 ns", "p99 ns", "p99.9 ns"] }
            let pipelines = rows.contains { $0.summary?.perThreadNsPerElement != nil }
            if pipelines { table[0] += ["per-thread ns/elem"] }
            table[0] += ["×seed", "×floor", "status"]
            for row in rows {
                guard let s = row.summary else {
                    table.append(
                        [row.design.name, "\(row.threads)"] + Array(repeating: "", count: table[0].count - 3)
                            + ["\(row.status.rawValue.uppercased()): \(row.failure ?? "?")"])
                    continue
                }
                var line = [
                    row.design.name, "\(row.threads)", fmt(s.nsPerElement.median),
                    "[\(fmt(s.nsPerElement.ciLow))–\(fmt(s.nsPerElement.ciHigh))]",
                    String(format: "%.2f", s.elementsPerSecond.median / 1e6),
                    String(format: "%.2f", s.allocationsPerElement.median), fmt(s.cpuNsPerElement.median),
                ]
                if scenario.hasLatency {
                    line += [
                        s.latencyP50.map { fmt($0.median) } ?? "–", s.latencyP99.map { fmt($0.median) } ?? "–",
                        s.latencyP999.map { fmt($0.median) } ?? "–",
                    ]
                }
                if pipelines { line.append(s.perThreadNsPerElement.map { fmt($0.median) } ?? "–") }
                line += [
                    s.ratioToSeed.map { String(format: "%.2f", $0) } ?? "–",
                    (s.latencyP50RatioToFloor ?? s.ratioToFloor).map { String(format: "%.2f", $0) } ?? "–", "ok",
                ]
                table.append(line)
            }
            // design and threads (the row's names) and status left, the figures right
            out += TextTable(rows: table, alignment: { c, count in c < 2 || c == count - 1 ? .left : .right }).render()
        }
        let latencyRatios = Set(
            file.rows.filter { $0.summary?.latencyP50RatioToFloor != nil }.map { $0.scenario.rawValue })
        if !latencyRatios.isEmpty {
            out +=
                "\n(\(latencyRatios.sorted().joined(separator: ", ")): ×floor is the ratio of p50 latency to the scenario's own floor's)\n"
        }
        return out
    }

    static func fmt(_ v: Double) -> String {
        v >= 100 ? String(format: "%.0f", v) : v >= 10 ? String(format: "%.1f", v) : String(format: "%.2f", v)
    }
}
