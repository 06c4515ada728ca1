import StepBenchScenarios

extension ResultsFile {
    /// The floors of files written before the tool wrote its catalog into them (stepbench/2
    /// first, then /1): a file was made with the first map whose floor for the scenario it holds.
    static let floorsBeforeCatalog: [[ScenarioKind: ScenarioKind]] = [
        [
            .syncStep: .floorSync, .asyncStep: .floorAsync, .staleStorm: .floorStaleStorm,
            .cancelRace: .floorCancelRace, .fanOut: .floorFanOut, .paceJitter: .floorPace,
        ],
        [.syncStep: .floorSync, .staleStorm: .floorSync, .fanOut: .floorSync, .asyncStep: .floorPingPong],
    ]

    /// The floor this file compares `scenario` to: its catalog's, or for a file older than the
    /// catalog the floor of its time (``floorsBeforeCatalog``).
    public func floor(of scenario: ScenarioKind) -> ScenarioKind? {
        if let catalog {
            return catalog.scenarios.first { $0.name == scenario.rawValue }?.floor.flatMap(ScenarioKind.init(rawValue:))
        }
        let present = Set(rows.map(\.scenario) + (profiles ?? []).map(\.scenario))
        for floors in Self.floorsBeforeCatalog {
            if let floor = floors[scenario], present.contains(floor) { return floor }
        }
        return nil
    }

    /// `row`'s floor row in this file: its floor (``floor(of:)``) at the floor's thread count for
    /// the row's threads.
    public func floorRow(of row: Row) -> Row? {
        guard let floor = floor(of: row.scenario), let threads = floor.threadCounts(requested: [row.threads]).first
        else { return nil }
        return self.row(RowKey(scenario: floor, design: .floor, threads: threads))
    }
}

extension ResultsFile {
    /// The catalog this file was written with: its own, or for a file older than the catalog
    /// today's with the floors of its time (``floor(of:)``).
    public var writtenWith: Catalog {
        if let catalog { return catalog }
        var today = Catalog.current
        for i in today.scenarios.indices {
            guard let scenario = ScenarioKind(rawValue: today.scenarios[i].name), !scenario.isFloor else { continue }
            today.scenarios[i].floor = floor(of: scenario)?.rawValue
        }
        return today
    }
}
