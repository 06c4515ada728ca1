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
                "scenario", "design", "threads", "metric", "baseline", "current", "ratio", "95% CI", "detectable",
                "verdict",
            ]
            let body = rows.map { r -> [String] in
                [
                    r.scenario, r.design, r.oversubscribed == true ? "\(r.threads) (over cores)" : String(r.threads),
                    r.metric.rawValue, r.baseline.map(Self.fmt) ?? "–",
                    r.current.map(Self.fmt) ?? "–", r.ratio.map { String(format: "%.3f", $0) } ?? "–",
                    r.ciLow.flatMap { l in r.ciHigh.map { String(format: "[%.3f, %.3f]", l, $0) } }
                        ?? (r.exact ? "exact" : "–"),
                    r.detectableEffect.map { Self.percent($0) } ?? "–",
                    Self.verdictText(r),
                ]
            }
            let timing =
                rows.contains { !$0.exact && $0.ratio != nil }
                ? String(
                    format: "; timing verdicts on %.3f%% family-wise intervals%@", 100 * decisionLevel,
                    noiseProfile.map { ", drift allowance from the \($0) noise profile" }
                        ?? ", no drift allowance (no noise profile)")
                : ""
            let power = detectableByScenario.map { "\($0.scenario) \(Self.percent($0.median))" }
            let summary =
                "\(regressions.count) regression(s); baseline \(baselineCommit.prefix(10)), current \(currentCommit.prefix(10)), min effect \(Int(minEffect * 100))%\(timing)"
                + (power.isEmpty
                    ? ""
                    : "\ndetectable effect of the decided timing rows (median by scenario): "
                        + power.joined(separator: ", "))
            if format == .markdown {
                let lines =
                    [
                        "| " + header.joined(separator: " | ") + " |",
                        "|" + String(repeating: "---|", count: header.count),
                    ]
                    + body.map { "| " + $0.joined(separator: " | ") + " |" }
                return lines.joined(separator: "\n") + "\n\n" + summary + "\n" + attributionText
            }
            return TextTable(rows: [header] + body).render() + summary + "\n" + attributionText
        }
    }

    /// Where each moved exact count went (``attributions``), a paragraph per row, after the
    /// table: nothing when the files hold no whole profiles.
    var attributionText: String { Self.attributionText(attributions) }

    /// ``attributionText`` of `attributions`.
    static func attributionText(_ attributions: [Attribution]?) -> String {
        guard let attributions else { return "" }
        guard !attributions.isEmpty else {
            return "where it went: no function moved (whole profiles on both sides)\n"
        }
        func signed(_ x: Double) -> String { String(format: "%+.2f", x) }
        func calls(_ x: Double) -> String { String(format: "%.2f", x) }
        var lines = [
            "where it went (functions by the Δ charged to them: their own instructions per event and what the calls they"
                + " make more or less often cost; whole profiles on both sides):"
        ]
        for a in attributions {
            lines.append(
                "  \(a.target) \(a.design): \(Self.fmt(a.baseline)) → \(Self.fmt(a.current)) (\(signed(a.delta)))"
                    + (a.functions.isEmpty ? ": no function moved" : "") + Self.changeText(a))
            for f in a.functions {
                let code = f.codeChanged.map { $0 ? "; code changed" : "; same code" } ?? ""
                let inlined = f.inlinedInto.map { "; inlined into " + $0.joined(separator: ", ") } ?? ""
                let freed =
                    f.freedIn.map { "; with the freeing of what it allocates, in " + $0.joined(separator: ", ") } ?? ""
                lines.append(
                    "    \(signed(f.charged)) (\(String(format: "%.0f%%", 100 * f.share))) \(f.key) (exclusive \(signed(f.exclusive)), inclusive \(signed(f.inclusive)); \(f.cause.rawValue)\(code)\(inlined)\(freed))"
                )
            }
            if !a.functions.isEmpty { lines.append("    \(signed(a.remainder)) remainder (functions not listed)") }
            for e in a.edges {
                lines.append(
                    "    calls \(e.caller) → \(e.callee): \(calls(e.callsBefore)) → \(calls(e.callsAfter)) per event")
            }
            for r in a.runtimeCalls {
                lines.append(
                    "    runtime \(r.kind.rawValue) \(r.callee) from \(r.caller): \(calls(r.callsBefore)) → \(calls(r.callsAfter)) per event"
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// " — code changed in N functions: a, b, …", " — layout only (…)": the row's
    /// ``Attribution/change``; nothing for a comparison that did not tell it.
    static func changeText(_ a: Attribution) -> String {
        guard let change = a.change else { return a.functions.isEmpty ? " (layout only)" : "" }
        guard change == .code, let keys = a.codeChanged, !keys.isEmpty else { return " — \(change.rawValue)" }
        let shown = keys.prefix(3).joined(separator: ", ") + (keys.count > 3 ? ", …" : "")
        return " — code changed in \(keys.count) function\(keys.count == 1 ? "" : "s"): \(shown)"
    }

    /// The decided timing rows' median detectable effect per scenario, in the rows' order.
    public var detectableByScenario: [(scenario: String, median: Double)] {
        var order: [String] = [], effects: [String: [Double]] = [:]
        for r in rows where r.verdict != .information {
            guard let e = r.detectableEffect else { continue }
            if effects[r.scenario] == nil { order.append(r.scenario) }
            effects[r.scenario, default: []].append(e)
        }
        return order.map { ($0, Statistics.median(effects[$0]!)) }
    }

    static func verdictText(_ r: Row) -> String {
        switch r.verdict {
        case .regression, .failed: r.verdict.rawValue.uppercased()
        case .inconclusive: "inconclusive, could detect \(r.detectableEffect.map { percent($0) } ?? "?")"
        default: r.verdict.rawValue
        }
    }

    /// A detectable effect: ±12%, ±×15 from 10 up, and past a thousandfold simply "±>×1000".
    static func percent(_ effect: Double) -> String {
        effect >= 999
            ? "±>×1000" : effect >= 10 ? String(format: "±×%.0f", 1 + effect) : String(format: "±%.0f%%", 100 * effect)
    }

    static func fmt(_ v: Double) -> String {
        v >= 100 ? String(format: "%.0f", v) : v >= 1 ? String(format: "%.2f", v) : String(format: "%.4f", v)
    }
}
