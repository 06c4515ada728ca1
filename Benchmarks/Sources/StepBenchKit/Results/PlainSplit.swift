import Foundation
import StepBenchScenarios

extension ResultsFile {
    /// A peer's direct row beside its library in a plain program (``PlainRow``), and what the
    /// difference between the two is made of, each part measured in the same run: the upstream
    /// (the program on `(0..<n).publisher`, `plain-sync`, against the same program on sync-step's
    /// upstream, `plain-upstream`) and the rest, the harness's consumer against the user's program
    /// (`plain-upstream` against `direct-sync`). Per element, from the rows' medians.
    public struct PlainSplit: Codable, Equatable, Sendable {
        public var design: String
        public var directNsPerElement: Double
        /// The plain program on `(0..<n).publisher`.
        public var plainNsPerElement: Double
        /// The same program on sync-step's upstream.
        public var plainUpstreamNsPerElement: Double
        /// Plain over direct.
        public var ratio: Double
        /// plain − plain-upstream: what `(0..<n).publisher` costs against sync-step's upstream.
        public var upstreamNsPerElement: Double
        /// plain-upstream − direct: the user's program against the harness's consumer.
        public var restNsPerElement: Double
        /// Whether the two differ by more than ``explainedBeyond``: the report then says what the
        /// difference is made of.
        public var explained: Bool

        /// A difference the report explains in parts: a quarter either way.
        public static let explainedBeyond = 0.25

        static func splits(_ file: ResultsFile) -> [PlainSplit] {
            let direct = ScenarioKind.answering(.direct), plain = ScenarioKind.answering(.plain)
            let upstream = ScenarioKind.answering(.plainUpstream)
            func median(_ s: ScenarioKind, _ d: Subject) -> Double? {
                guard let row = file.row(RowKey(scenario: s, design: d, threads: 1)), row.status == .ok else {
                    return nil
                }
                return row.summary?.nsPerElement.median
            }
            return file.rows.compactMap { row in
                guard row.scenario == direct, let d = median(direct, row.design), let p = median(plain, row.design),
                    let u = median(upstream, row.design)
                else { return nil }
                let ratio = p / d
                return PlainSplit(
                    design: row.design.name, directNsPerElement: d, plainNsPerElement: p, plainUpstreamNsPerElement: u,
                    ratio: ratio, upstreamNsPerElement: p - u, restNsPerElement: u - d,
                    explained: abs(ratio - 1) > explainedBeyond)
            }
        }
    }

    /// Each peer's direct row beside its plain program (``PlainSplit``).
    public var plainSplits: [PlainSplit] { PlainSplit.splits(self) }
}
