import StepBenchScenarios

extension ResultsFile {
    /// What one design's instructions per event cost over the plain floor, split in two: the
    /// stepping API's part (floor-step − floor: the box, the event, the promise, the stepper's
    /// call, done with no synchronisation) and the design's own (design − floor-step: what
    /// making it safe from any thread costs). Per path of the path profiler, and for the
    /// `sync-step` profile (floors `floor-sync` and `floor-step`). Paths about promises and
    /// `cancel()` have no plain floor: only the design's part is known there.
    public struct CostSplit: Codable, Equatable, Sendable {
        /// A path's name, or `sync-step` for the scenario's profile.
        public var path: String
        public var design: String
        /// The design's instructions per event.
        public var instructions: Double
        /// The plain floor's (nil: the path has none).
        public var floor: Double?
        /// floor-step's: the API with no synchronisation.
        public var floorStep: Double
        /// floor-step − floor (nil: no plain floor).
        public var api: Double?
        /// design − floor-step.
        public var synchronisation: Double
        /// The design's synchronising instructions per event over floor-step's (paths only).
        public var synchronisingOverFloorStep: Double?
        /// Whether every count it is made of is exact.
        public var exact: Bool

        /// The splits of every design that `profiles` and `paths` hold beside floor-step.
        public static func splits(profiles: [ProfileRow], paths: [PathRow]) -> [CostSplit] {
            var splits: [CostSplit] = []
            let perElement = ScenarioKind.answering(.perElement)
            let floorStep = profiles.first { $0.scenario == .answering(.apiFloor) }
            let floor = profiles.first { $0.scenario == perElement.floor }
            if let floorStep {
                for row in profiles where row.scenario == perElement {
                    splits.append(
                        CostSplit(
                            path: perElement.rawValue, design: row.design.name,
                            instructions: row.instructionsPerElement, floor: floor?.instructionsPerElement,
                            floorStep: floorStep.instructionsPerElement, synchronisingOverFloorStep: nil,
                            exact: [row, floorStep, floor].allSatisfy { $0?.collection != .wholeProcess }))
                }
            }
            let byKey = Dictionary(paths.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
            for row in paths {
                guard row.design.design != nil, let step = byKey[.init(path: row.path, subject: .floorStep)] else {
                    continue
                }
                let plain = byKey[.init(path: row.path, subject: .floor)]
                splits.append(
                    CostSplit(
                        path: row.path.rawValue, design: row.design.name, instructions: row.instructionsPerEvent,
                        floor: plain?.instructionsPerEvent, floorStep: step.instructionsPerEvent,
                        synchronisingOverFloorStep: row.synchronisingPerEvent - step.synchronisingPerEvent,
                        exact: row.exact && step.exact && plain?.exact != false))
            }
            return splits
        }

        init(
            path: String, design: String, instructions: Double, floor: Double?, floorStep: Double,
            synchronisingOverFloorStep: Double?, exact: Bool
        ) {
            self.path = path
            self.design = design
            self.instructions = instructions
            self.floor = floor
            self.floorStep = floorStep
            api = floor.map { floorStep - $0 }
            synchronisation = instructions - floorStep
            self.synchronisingOverFloorStep = synchronisingOverFloorStep
            self.exact = exact
        }
    }
}
