import Foundation
@_spi(Measurement) import Stepping

/// A rule's checks in a child process: one rule on one design per process, so that a design that
/// crashes a check (a precondition of the design's own, a trap on what a misbehaving upstream
/// sends) costs that rule's cell, naming the check and quoting the crash, not the run. Any
/// executable that knows the designs answers with ``ruleChildMain(_:)``; ``runInChild(_:on:executable:arguments:stallLimit:)``
/// starts it. The torture cases the rule has run in children of that child, through the same
/// executable (`TORTURE-ARGUMENTS` before the case's own).
///
/// The child's arguments are `RULE DESIGN STALL-LIMIT TORTURE-ARGUMENTS…`; it writes a line
/// `check NAME` to stderr before each check, and one line `failure\tCHECK\tFILE-ID\tLINE\tMESSAGE`
/// to stdout per failure (tabs and newlines in the message as spaces); it exits 0 when it ran the
/// checks (whatever they found), 2 on bad arguments.
extension Conformance {
    /// Seconds a rule's child process may run before its parent stops it: far above any rule's
    /// checks, whose stalls the child's own stall limit catches first.
    static let childTimeLimit: Double = 1_800

    /// The child's side: runs the rule `arguments` name and exits as above.
    public static func ruleChildMain(_ arguments: [String], executable: URL) -> Never {
        ChildGuard.dieWithParent()
        guard arguments.count >= 3, let rule = SteppingRule(rawValue: arguments[0]),
            let design = SteppingDesign(rawValue: arguments[1]), let limit = Double(arguments[2]), limit > 0
        else {
            FileHandle.standardError.write(
                Data(
                    "conformance child: expected RULE DESIGN STALL-LIMIT [TORTURE-ARGUMENTS…], got \(arguments)\n".utf8)
            )
            exit(2)
        }
        let configuration = Configuration(
            stallLimit: limit,
            runTorture: TortureCase.runner(executable: executable, arguments: Array(arguments.dropFirst(3))))
        let known = design.traits.knownIssue(rule)
        for check in checks where check.rule == rule {
            FileHandle.standardError.write(Data("check \(check.name)\n".utf8))
            let checkLimit = known != nil && check.isTorture ? configuration.knownIssueStallLimit : limit
            for failure in run(check, design: design, configuration: configuration, limit: checkLimit) {
                let message = failure.message.map { $0 == "\t" || $0 == "\n" ? " " : $0 }
                print("failure\t\(failure.check)\t\(failure.fileID)\t\(failure.line)\t\(String(message))")
            }
        }
        exit(0)
    }

    /// Runs `rule`'s checks on `design` in a child process (`executable arguments RULE DESIGN
    /// STALL-LIMIT`, whose ``ruleChildMain(_:executable:)`` answers; the child starts its torture cases as
    /// `executable tortureArguments CASE DESIGN SECONDS`). A child that dies by a signal or exits
    /// otherwise than 0 is a failure of the check it was running, quoting its last output.
    public static func runInChild(
        _ rule: SteppingRule, on design: SteppingDesign, executable: URL, arguments: [String],
        tortureArguments: [String], stallLimit: Double = Configuration().stallLimit
    ) -> RuleResult {
        let ruleChecks = checks.filter { $0.rule == rule }.map(\.name)
        func result(_ failures: [RuleResult.Failure]) -> RuleResult {
            RuleResult(
                rule: rule, design: design.name, checks: ruleChecks, failures: failures,
                knownIssue: design.traits.knownIssue(rule))
        }
        let outcome: ChildLaunch.Outcome
        do {
            outcome = try ChildLaunch(
                executable: executable,
                arguments: arguments + [rule.rawValue, design.rawValue, String(stallLimit)] + tortureArguments
            ).run(timeLimit: Self.childTimeLimit)
        } catch {
            return result([
                .init(
                    check: rule.rawValue, message: "\(executable.path) did not start (\(error))", fileID: #fileID,
                    filePath: #filePath, line: #line)
            ])
        }
        let (outText, errText) = (outcome.stdoutText, outcome.stderrText)
        var failures: [RuleResult.Failure] = outText.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, fields[0] == "failure", let number = Int(fields[3]) else { return nil }
            return .init(check: fields[1], message: fields[4], fileID: fields[2], filePath: fields[2], line: number)
        }
        if outcome.timedOut {
            failures.append(
                .init(
                    check: rule.rawValue,
                    message:
                        "its child process ran past \(Int(Self.childTimeLimit)) s and was stopped (a stall its own watchdog did not catch)",
                    fileID: #fileID, filePath: #filePath, line: #line))
        } else if !outcome.succeeded {
            let lines = errText.split(separator: "\n").map(String.init)
            let check = lines.last { $0.hasPrefix("check ") }.map { String($0.dropFirst(6)) } ?? rule.rawValue
            let how =
                outcome.reason == .uncaughtSignal
                ? "crashed the process (signal \(outcome.status))" : "ended its process with exit \(outcome.status)"
            let cause = lines.first { $0.contains("failed:") || $0.contains("Fatal error") || $0.contains("error:") }
            failures.append(
                .init(
                    check: check, message: how + (cause.map { ": \($0)" } ?? ""), fileID: #fileID, filePath: #filePath,
                    line: #line))
        }
        return result(failures)
    }
}
