@_spi(Measurement) import Stepping
import Testing

/// Runs `body` for `design`; where the design's traits declare one of `rules` broken (as `seed`,
/// the faithful port of the original, does: docs/CONFORMANCE.md, "What the original gets
/// wrong"), as a known issue: the body must record a failure. If the design ever stopped failing,
/// `withKnownIssue` would fail the test ("known issue was not recorded"), so a declared known
/// issue is checked, not asserted.
func expecting(_ design: SteppingDesign, breaks rules: SteppingRule..., in body: () throws -> Void) rethrows {
    let issues = rules.compactMap(design.traits.knownIssue)
    if issues.isEmpty {
        try body()
    } else {
        let what = issues.map { "\($0.rule): \($0.reason)" }.joined(separator: "; ")
        withKnownIssue(Comment(rawValue: "\(design) breaks \(what)")) { try body() }
    }
}
