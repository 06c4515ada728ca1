import Foundation
@_spi(Measurement) import Stepping

/// The conformance kit: every rule of docs/CONFORMANCE.md as black-box checks that run on any
/// ``SteppingDesign`` — a built-in or one of your own — from a test target or a tool.
///
/// Each check drives the design through its public API only: a scripted upstream, real
/// OpenCombine publishers, hostile upstreams and steppers (the torture cases, run here in the
/// calling process). ``run(_:on:configuration:)`` runs every check of one rule and returns a
/// ``RuleResult``; a rule the design declares broken (``SteppingDesign/Traits/knownIssues``)
/// comes back as a known issue, and fails if none of its checks shows it. From Swift Testing:
///
/// ```swift
/// @Test(arguments: Conformance.rules)
/// func rule(_ rule: SteppingRule) {
///     let result = Conformance.run(rule, on: .semaphore)
///     #expect(result.conforms, "\(result)")
/// }
/// ```
///
/// Rule R2 (allocations per element) is measured, not checked here: `stepbench run` counts
/// allocations. A check that stalls is abandoned after ``Configuration/stallLimit`` seconds and
/// fails the rule (its thread stays blocked: a design that deadlocks leaks one thread); a design
/// that crashes ends the process, unless its torture cases run in child processes
/// (``Configuration/runTorture``).
public enum Conformance {
    /// One check of one rule.
    public struct Check: Sendable {
        /// The rule it checks (it may touch others on the way).
        public let rule: SteppingRule
        /// Its name, unique in the kit.
        public let name: String
        /// What it does, in a line.
        public let title: String
        /// Its torture case, if it is one: the check that shows a declared known issue of its
        /// rule (a deadlock among them), so it gets the short limit when the design declares one.
        public let torture: TortureCase?
        let body: @Sendable (SteppingDesign) -> Void

        /// Whether it is a torture case.
        public var isTorture: Bool { torture != nil }
        /// Whether a design with the fault it looks for can pass one run of it
        /// (``TortureCase/isStochastic``); every other check is required: one run shows what it checks.
        public var isStochastic: Bool { torture?.isStochastic ?? false }

        init(
            _ rule: SteppingRule, _ name: String, _ title: String, torture: TortureCase? = nil,
            _ body: @escaping @Sendable (SteppingDesign) -> Void
        ) {
            self.rule = rule
            self.name = name
            self.title = title
            self.torture = torture
            self.body = body
        }
    }

    /// How long and how hard the checks run.
    public struct Configuration: Sendable {
        /// Elements of rule S5's stack-depth check (a million by default; fewer under a sanitizer).
        public var s5Elements: Int
        /// Seconds a check may run before it counts as stalled (rule R4).
        public var stallLimit: Double
        /// Seconds the torture case of a rule the design declares broken may run: a declared
        /// deadlock (rule R3) need not wait the whole ``stallLimit``. The rule's other checks keep
        /// ``stallLimit``, so that a slow check is not taken for the declared issue.
        public var knownIssueStallLimit: Double
        /// Runs one torture case on a design within the seconds given and returns the violations
        /// it saw (a crash or a stall is one). By default in this process
        /// (``TortureCase/runInProcess(_:on:seconds:)``); a runner that starts a child process per
        /// case keeps a crash from ending the caller (the suite's own tests run `SteppingTorture`).
        public var runTorture:
            @Sendable (_ torture: TortureCase, _ design: SteppingDesign, _ seconds: Double) -> [String]

        /// The checks' defaults.
        public init(
            s5Elements: Int = 1_000_000, stallLimit: Double = 120, knownIssueStallLimit: Double = 15,
            runTorture: @escaping @Sendable (TortureCase, SteppingDesign, Double) -> [String] = TortureCase.runInProcess
        ) {
            self.s5Elements = s5Elements
            self.stallLimit = stallLimit
            self.knownIssueStallLimit = knownIssueStallLimit
            self.runTorture = runTorture
        }
    }

    /// Every check, in rule order.
    public static let checks: [Check] = {
        let all = scriptedChecks + tortureChecks
        return SteppingRule.allCases.flatMap { rule in all.filter { $0.rule == rule } }
    }()

    /// The rules the kit checks: every rule but R2, which is measured.
    public static var rules: [SteppingRule] {
        SteppingRule.allCases.filter { rule in checks.contains { $0.rule == rule } }
    }

    /// The configuration of the checks running on this thread.
    static var configuration: Configuration { Recorder.current?.configuration ?? Configuration() }
    /// How long a check waits for a stream to finish before it says it did not: `seconds`, or
    /// four fifths of the stall limit if that is shorter (a short limit, as for known-bad
    /// designs, shortens the wait with it, and the check fails by its own expectation first).
    static func patience(_ seconds: Double) -> Double { min(seconds, stallLimit * 0.8) }
    /// How long a check waits for an effect that should follow at once (an asynchronous design's
    /// delivery): 5 s, or less under a short stall limit (at least 1 s).
    static var briefWait: Double { max(1, min(5, stallLimit - 5)) }
    /// The seconds the check running on this thread may take.
    static var stallLimit: Double { Recorder.current?.limit ?? Configuration().stallLimit }

    /// Runs every check of `rule` on `design`, one after the other, each on a thread of its own.
    public static func run(
        _ rule: SteppingRule, on design: SteppingDesign, configuration: Configuration = Configuration()
    ) -> RuleResult {
        let known = design.traits.knownIssue(rule)
        var failures: [RuleResult.Failure] = []
        let ruleChecks = checks.filter { $0.rule == rule }
        for check in ruleChecks {
            let limit = known != nil && check.isTorture ? configuration.knownIssueStallLimit : configuration.stallLimit
            failures += run(check, design: design, configuration: configuration, limit: limit)
        }
        return RuleResult(
            rule: rule, design: design.name, checks: ruleChecks.map(\.name), failures: failures, knownIssue: known)
    }

    /// Runs `check` on a thread of its own (8 MiB of stack, as a main thread), waiting at most
    /// `limit` seconds.
    static func run(_ check: Check, design: SteppingDesign, configuration: Configuration, limit: Double)
        -> [RuleResult.Failure]
    {
        let recorder = Recorder(check: check.name, configuration: configuration, limit: limit)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            Thread.current.threadDictionary[Recorder.key] = recorder
            check.body(design)
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.name = "conformance \(design) \(check.name)"
        thread.start()
        // A child-process torture runner's own watchdog fires at `limit`: give it time to report
        // (10 s, or `limit` if that is shorter: a short limit is for quick verdicts).
        guard done.wait(timeout: .now() + limit + min(10, limit)) == .success else {
            return recorder.failures + [
                .init(
                    check: check.name,
                    message:
                        "stalled: still running after \(limit) s (a deadlock, or a stall: R4); its thread is abandoned",
                    fileID: #fileID, filePath: #filePath, line: #line)
            ]
        }
        return recorder.failures
    }
}

/// What one rule's checks found on one design.
public struct RuleResult: Sendable, CustomStringConvertible {
    /// One failed expectation of a check.
    public struct Failure: Sendable, CustomStringConvertible {
        /// The check that failed.
        public var check: String
        /// What was expected and not seen.
        public var message: String
        /// Where the expectation is written, as `Module/File.swift`.
        public var fileID: String
        /// The same file's path when the kit was built.
        public var filePath: String
        /// The expectation's line.
        public var line: Int
        /// `check: message (file:line)`.
        public var description: String { "\(check): \(message) (\(fileID):\(line))" }
    }

    /// The result in a word.
    public enum Verdict: String, Sendable {
        /// Every check passed.
        case passed
        /// The design declares the rule broken, and a check shows it.
        case knownIssue = "known issue"
        /// A check failed on a rule the design does not declare broken.
        case failed
        /// The design declares the rule broken, but every check passed: the declaration is stale
        /// (or the kit cannot show the issue).
        case knownIssueNotShown = "known issue not shown"
    }

    /// The rule checked.
    public let rule: SteppingRule
    /// The design's name.
    public let design: String
    /// The checks that ran.
    public let checks: [String]
    /// Every failed expectation of those checks, in order (a stall is one).
    public let failures: [Failure]
    /// The design's declaration for this rule, if it declares it broken.
    public let knownIssue: SteppingDesign.Traits.KnownIssue?

    /// What the failures mean, given the design's declaration.
    public var verdict: Verdict {
        switch (knownIssue, failures.isEmpty) {
        case (nil, true): .passed
        case (nil, false): .failed
        case (_?, false): .knownIssue
        case (let known?, true): known.isIntermittent ? .passed : .knownIssueNotShown
        }
    }

    /// Whether the design keeps the rule or breaks it as it declares.
    public var conforms: Bool { verdict == .passed || verdict == .knownIssue }

    /// The verdict, the declaration and the first failures, one per line.
    public var description: String {
        var lines = ["\(design) \(rule) (\(rule.summary)): \(verdict.rawValue), \(checks.count) checks"]
        if let knownIssue { lines.append("  declared: \(knownIssue.reason)") }
        lines += failures.prefix(10).map { "  \($0)" }
        if failures.count > 10 { lines.append("  … and \(failures.count - 10) more") }
        return lines.joined(separator: "\n")
    }
}

/// Collects the failed expectations of the check running on its thread.
final class Recorder: @unchecked Sendable {  // `failures` behind `lock`
    static let key = "org.stepbench.conformance.recorder"
    static var current: Recorder? { Thread.current.threadDictionary[key] as? Recorder }

    let check: String
    let configuration: Conformance.Configuration
    /// Seconds the check may run.
    let limit: Double
    private let lock = NSLock()
    private var _failures: [RuleResult.Failure] = []

    init(check: String, configuration: Conformance.Configuration, limit: Double) {
        self.check = check
        self.configuration = configuration
        self.limit = limit
    }

    var failures: [RuleResult.Failure] { lock.withLock { _failures } }
    func record(_ message: String, fileID: String, filePath: String, line: Int) {
        lock.withLock {
            _failures.append(.init(check: check, message: message, fileID: fileID, filePath: filePath, line: line))
        }
    }
}

/// Records a failure of the running check unless `condition` holds. Called on the check's own
/// thread; anywhere else it stops the process (a check must not expect from a helper thread).
func expect(
    _ condition: Bool, _ comment: @autoclosure () -> String = "", fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line
) {
    guard !condition else { return }
    guard let recorder = Recorder.current else {
        preconditionFailure("\(fileID):\(line): expect(_:) outside a conformance check's thread")
    }
    let comment = comment()
    recorder.record(comment.isEmpty ? "expectation failed" : comment, fileID: fileID, filePath: filePath, line: line)
}

/// Records a failure unless `seen == expected`, saying what was expected and what was seen
/// (`what` says of what).
func expectEqual<T: Equatable>(
    _ seen: T, _ expected: T, _ what: @autoclosure () -> String = "", fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line
) {
    guard seen != expected else { return }
    let what = what()
    expect(
        false, "\(what.isEmpty ? "" : "\(what): ")\(difference(seen, expected))", fileID: fileID, filePath: filePath,
        line: line)
}

/// "expected X, saw Y", each cut to 240 characters; for arrays, their counts and the first index
/// where they differ.
func difference<T>(_ seen: T, _ expected: T) -> String {
    func shown(_ value: Any) -> String {
        let text = String(describing: value)
        return text.count > 240 ? "\(text.prefix(240))… (\(text.count) characters)" : text
    }
    if let seen = seen as? [any Equatable], let expected = expected as? [any Equatable],
        shown(seen).count > 240 || shown(expected).count > 240
    {
        let common = min(seen.count, expected.count)
        let first = (0..<common).first { !isEqual(seen[$0], expected[$0]) } ?? common
        let at = { (array: [any Equatable]) in first < array.count ? shown(array[first]) : "nothing" }
        return
            "expected \(expected.count) elements, saw \(seen.count); first difference at index \(first): expected \(at(expected)), saw \(at(seen))"
    }
    return "expected \(shown(expected)), saw \(shown(seen))"
}

private func isEqual(_ a: any Equatable, _ b: any Equatable) -> Bool {
    func open<A: Equatable>(_ a: A) -> Bool { (b as? A) == a }
    return open(a)
}

/// Waits (bounded, see ``eventually(timeout:_:)``) until `value()` equals `expected`, for the
/// designs that deliver asynchronously; records what was expected and the last value seen if it
/// never does.
func expectSoon<T: Equatable>(
    timeout: Double = Conformance.briefWait, _ value: () -> T, equals expected: T,
    _ what: @autoclosure () -> String = "",
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line
) {
    guard !eventually(timeout: timeout, { value() == expected }) else { return }
    let what = what()
    expect(
        false, "\(what.isEmpty ? "" : "\(what): ")within \(Int(timeout)) s, \(difference(value(), expected))",
        fileID: fileID, filePath: filePath, line: line)
}
