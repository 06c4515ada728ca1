import Foundation
import StepBenchScenarios

/// The path rows as the tool prints them: one line per (path, design), in the catalog's order.
public enum PathTable {
    public static func text(_ rows: [ResultsFile.PathRow]) -> String {
        var table = TextTable(
            rows: [["path", "design", "per", "instructions", "synchronising", "allocations"]]
                + rows.map { row in
                    [
                        row.path.rawValue, row.design.name, row.path.event,
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

/// The cost splits as the tool prints them: one line per (path, design).
public enum CostSplitTable {
    public static func text(_ splits: [ResultsFile.CostSplit]) -> String {
        func number(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "–" }
        var table = TextTable(
            rows: [["path", "design", "instructions", "floor", "floor-step", "API", "synchronisation", "sync. instr."]]
                + splits.map { s in
                    [
                        s.path, s.design, number(s.instructions), number(s.floor), number(s.floorStep), number(s.api),
                        number(s.synchronisation) + (s.exact ? "" : " *"), number(s.synchronisingOverFloorStep),
                    ]
                })
        table.alignment = { column, _ in column >= 2 ? .right : .left }
        return
            "instructions per event over the floor: the API's part (floor-step − floor) and the design's (design − floor-step; * follows the schedule):\n"
            + table.render()
    }
}
