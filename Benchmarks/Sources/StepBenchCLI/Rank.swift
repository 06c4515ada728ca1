import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Rank: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ranking",
            abstract:
                "Rank the designs of one run on each question: which is fastest, and whether the next ones tie with it.",
            discussion:
                "For each scenario × threads and metric (ns per element, p50 latency) the designs and peers of RESULTS, lowest median first; every pair compared round by round (the run measured them in the same rounds): the slower's ratio over the faster and its 95% Student-t interval. A design is the best only where every interval against it lies above 1; else it ties. The report's verdict reads this."
        )

        @Argument(help: "A results file (stepbench run), or a folder holding latest.json.")
        var file: String

        @Option(help: "The output's format.")
        var format: ListFormat = .text

        func run() throws {
            let file = try Inputs.results(file)
            let rankings = Ranking.rank(file).filter { format == .json || $0.field == .all }
            switch format {
            case .json: print(String(decoding: try JSONOutput.encode(rankings), as: UTF8.self))
            case .text: print(Self.text(rankings), terminator: "")
            }
        }

        /// A line per question: the best or the tie, then the others' ratios to the first.
        static func text(_ rankings: [Ranking]) -> String {
            var out = ""
            for r in rankings {
                guard let first = r.standings.first else { continue }
                let ties = r.ties(of: first.design)
                let ahead = r.ahead(of: first.design).map(\.name)
                let head =
                    (r.best != nil
                        ? "\(first.design) best"
                        : ties.isEmpty
                            ? "\(first.design)" : "\(first.design) ties \(ties.map(\.name).joined(separator: ", "))")
                    + (ahead.isEmpty ? "" : ", but \(ahead.joined(separator: ", ")) faster round by round")
                let others = r.pairs.filter { $0.faster == first.design }.map { p in
                    guard let ratio = p.ratio, let low = p.ciLow, let high = p.ciHigh else {
                        return "\(p.slower) (\(p.rounds) rounds: too few)"
                    }
                    return "\(p.slower) " + String(format: "%.2f× [%.2f, %.2f]", ratio, low, high)
                }
                out +=
                    "\(r.scenario.rawValue) ×\(r.threads) \(r.metric.rawValue): \(head) (median \(String(format: "%.1f", first.median))); "
                    + others.joined(separator: ", ") + "\n"
            }
            return out
        }
    }
}
