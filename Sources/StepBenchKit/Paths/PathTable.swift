import Foundation
import StepBenchScenarios

/// The path rows as the tool prints them: one line per (path, design), in the catalog's order.
public enum PathTable {
    public static func text(_ rows: [ResultsFile.PathRow]) -> String {
        var table = TextTable(
            rows: [["path", "design", "per", "instructions", "synchronising", "allocations"]]
                + rows.map { row in
                    [
                        row.path.rawValue, row.design, row.path.event,
                        String(format: "%.1f", row.instructionsPerEvent),
                        String(format: "%.2f", row.synchronisingPerEvent),
                        String(format: "%.2f", row.allocationsPerEvent),
                    ]
                })
        table.alignment = { column, _ in column >= 3 ? .right : .left }
        return "exact counts per event (callgrind: every thread in the driver's window; allocations: jemalloc):\n"
            + table.render()
    }
}
