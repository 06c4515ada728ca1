import Foundation
import StepBenchScenarios

extension ResultsFile {
    /// A peer's cost split in two: its library's (its direct row, `direct-sync`: the library on
    /// sync-step's upstream with no stepper contract) and its bridge's (the peer's sync-step row
    /// minus the direct row: what meeting the stepper contract costs it). Per element, from the
    /// rows' median ns and, where both were profiled, their exact instructions.
    public struct BridgeSplit: Codable, Equatable, Sendable {
        public var design: String
        /// The peer's sync-step median ns per element, its direct row's, and their difference.
        public var nsPerElement: Double
        public var directNsPerElement: Double
        public var bridgeNsPerElement: Double
        /// The bridge over the direct row (0.25: the bridge costs a quarter of the library's time).
        public var bridgeShare: Double
        /// The same share round by round, with its 95% interval: the run measures a peer and its
        /// direct row in the same rounds, so the log of their ratio per round cancels the drift
        /// between rounds (as ``Ranking`` pairs designs); the share is the geometric mean ratio − 1.
        /// Nil with fewer than ``Ranking/minimumRounds`` rounds in common. An interval that holds 0
        /// does not separate the peer from its library.
        public var roundShare: Double?
        public var roundShareLow: Double?
        public var roundShareHigh: Double?
        /// The same from the profiles (instructions per element, exact), when both were profiled.
        public var instructionsPerElement: Double?
        public var directInstructionsPerElement: Double?
        public var bridgeInstructionsPerElement: Double?
        public var bridgeInstructionShare: Double?

        /// The splits of every design with an ok direct row and an ok sync-step row in `file`, in
        /// the order of the direct rows.
        static func splits(_ file: ResultsFile) -> [BridgeSplit] {
            let scenario = ScenarioKind.answering(.direct), shape = ScenarioKind.answering(.perElement)
            let profiles = file.profiles ?? []
            func profiled(_ s: ScenarioKind, _ design: Subject) -> Double? {
                profiles.first { $0.scenario == s && $0.design == design }?.instructionsPerElement
            }
            return file.rows.compactMap { direct in
                guard direct.scenario == scenario, direct.status == .ok, let library = direct.summary,
                    let peer = file.row(RowKey(scenario: shape, design: direct.design, threads: direct.threads)),
                    peer.status == .ok, let whole = peer.summary
                else { return nil }
                let ns = whole.nsPerElement.median
                let directNs = library.nsPerElement.median
                var split = BridgeSplit(
                    design: direct.design.name, nsPerElement: ns, directNsPerElement: directNs,
                    bridgeNsPerElement: ns - directNs, bridgeShare: (ns - directNs) / directNs)
                let logs = RepetitionResult.sameRounds(peer.repetitions, direct.repetitions).map {
                    log($0.nsPerElement / $1.nsPerElement)
                }
                if logs.count >= Ranking.minimumRounds {
                    let interval = Statistics.studentTInterval(ofLogs: logs, tail: (1 - Ranking.level) / 2)
                    (split.roundShare, split.roundShareLow, split.roundShareHigh) =
                        (interval.center - 1, interval.low - 1, interval.high - 1)
                }
                if let instructions = profiled(shape, direct.design),
                    let directInstructions = profiled(scenario, direct.design)
                {
                    split.instructionsPerElement = instructions
                    split.directInstructionsPerElement = directInstructions
                    split.bridgeInstructionsPerElement = instructions - directInstructions
                    split.bridgeInstructionShare = (instructions - directInstructions) / directInstructions
                }
                return split
            }
        }
    }

    /// Each peer's split into its library and its bridge (``BridgeSplit``).
    public var bridgeSplits: [BridgeSplit] { BridgeSplit.splits(self) }
}
