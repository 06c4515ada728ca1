import Stepping
@_exported import SteppingConformance
import Testing

/// Runs every check of `rule` on `design` (``Conformance/run(_:on:configuration:)``) and
/// records what it found in the running Swift Testing test: each failure as an issue at the
/// check's own source line; a rule the design declares broken as a known issue (so the test
/// passes, and fails once the issue is no longer shown: the declaration is then stale, unless
/// it is declared intermittent).
///
/// ```swift
/// @Test(arguments: Conformance.rules)
/// func rule(_ rule: SteppingRule) {
///     expectConformance(rule, of: .semaphore)
/// }
/// ```
public func expectConformance(
    _ rule: SteppingRule, of design: SteppingDesign,
    configuration: Conformance.Configuration = Conformance.Configuration(),
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let result = Conformance.run(rule, on: design, configuration: configuration)
    func record() {
        for failure in result.failures {
            Issue.record(
                Comment(rawValue: "\(design) \(rule): \(failure.check): \(failure.message)"),
                sourceLocation: SourceLocation(
                    fileID: failure.fileID, filePath: failure.filePath, line: failure.line, column: 1))
        }
    }
    if let known = result.knownIssue {
        withKnownIssue(
            Comment(rawValue: "\(design) breaks \(rule): \(known.reason)"), isIntermittent: known.isIntermittent,
            sourceLocation: sourceLocation
        ) {
            record()
        }
    } else {
        record()
    }
}
