import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

extension ResultsFile {
    /// Fills in the ratios to the reference design (`ratioToSeed`, its name on disk) and to the
    /// floor rows, and ``harnessWarnings``.
    public mutating func computeRatios() {
        var warnings: [String] = []
        defer { harnessWarnings = warnings.isEmpty ? nil : warnings }
        func find(_ scenario: ScenarioKind, _ design: Subject, _ threads: Int) -> Summary? {
            row(RowKey(scenario: scenario, design: design, threads: threads))?.summary
        }
        for i in rows.indices {
            rows[i].oversubscribed = machine.cores > 0 && rows[i].threads > machine.cores ? true : nil
            guard var summary = rows[i].summary else { continue }
            let row = rows[i]
            if !row.scenario.isFloor, let reference = find(row.scenario, .design(.reference), row.threads) {
                summary.ratioToSeed = summary.nsPerElement.median / reference.nsPerElement.median
            }
            if let floorKind = row.scenario.floor {
                let floorThreads = floorKind.threadCounts(requested: [row.threads]).first ?? 1
                if let floor = find(floorKind, .floor, floorThreads) {
                    summary.ratioToFloor = summary.nsPerElement.median / floor.nsPerElement.median
                    if let p50 = summary.latencyP50, let floorP50 = floor.latencyP50 {
                        summary.latencyP50RatioToFloor = p50.median / floorP50.median
                    }
                    if summary.nsPerElement.ciHigh < floor.nsPerElement.ciLow {
                        warnings.append(
                            String(
                                format:
                                    "%@ %@ ×%d: %.1f ns/element [%.1f, %.1f] beats its floor %@ at %.1f [%.1f, %.1f]: a harness defect",
                                row.scenario.rawValue, row.design.name, row.threads, summary.nsPerElement.median,
                                summary.nsPerElement.ciLow, summary.nsPerElement.ciHigh, floorKind.rawValue,
                                floor.nsPerElement.median, floor.nsPerElement.ciLow, floor.nsPerElement.ciHigh))
                    }
                }
            }
            rows[i].summary = summary
        }
    }
}
