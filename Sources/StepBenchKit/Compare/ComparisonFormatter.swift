import Foundation
import StepBenchScenarios

/// `stepbench compare --format text|markdown|json`.
public enum ComparisonFormat: String, CaseIterable, Sendable {
    case text, markdown, json
}

extension Comparison {
    public func render(_ format: ComparisonFormat) throws -> String {
        switch format {
        case .json:
            return try JSONOutput.string(self) + "\n"
        case .text, .markdown:
            let header = [
                "scenario", "design", "threads", "metric", "baseline", "current", "ratio", "95% CI", "verdict",
            ]
            let body = rows.map { r -> [String] in
                [
                    r.scenario, r.design, String(r.threads), r.metric.rawValue, r.baseline.map(Self.fmt) ?? "–",
                    r.current.map(Self.fmt) ?? "–", r.ratio.map { String(format: "%.3f", $0) } ?? "–",
                    r.ciLow.flatMap { l in r.ciHigh.map { String(format: "[%.3f, %.3f]", l, $0) } }
                        ?? (r.exact ? "exact" : "–"),
                    r.verdict == .regression || r.verdict == .failed
                        ? r.verdict.rawValue.uppercased() : r.verdict.rawValue,
                ]
            }
            let timing =
                rows.contains { !$0.exact && $0.ratio != nil }
                ? String(
                    format: "; timing verdicts on %.3f%% family-wise intervals%@", 100 * decisionLevel,
                    noiseProfile.map { ", drift allowance from the \($0) noise profile" }
                        ?? ", no drift allowance (no noise profile)")
                : ""
            let summary =
                "\(regressions.count) regression(s); baseline \(baselineCommit.prefix(10)), current \(currentCommit.prefix(10)), min effect \(Int(minEffect * 100))%\(timing)"
            if format == .markdown {
                let lines =
                    [
                        "| " + header.joined(separator: " | ") + " |",
                        "|" + String(repeating: "---|", count: header.count),
                    ]
                    + body.map { "| " + $0.joined(separator: " | ") + " |" }
                return lines.joined(separator: "\n") + "\n\n" + summary + "\n"
            }
            return TextTable(rows: [header] + body).render() + summary + "\n"
        }
    }

    static func fmt(_ v: Double) -> String {
        v >= 100 ? String(format: "%.0f", v) : v >= 1 ? String(format: "%.2f", v) : String(format: "%.4f", v)
    }
}
