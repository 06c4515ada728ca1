import ArgumentParser
import StepBenchKit

/// The tool's exit statuses: one table, one meaning in every command. `stepbench help` prints
/// it (``table``), and so does the README; no command translates another's status into its own.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case ok = 0
    case failure = 1
    case slower = 2
    case verificationFailed = 3
    case designFault = 4
    case undecided = 5

    /// What the status says, in a line.
    public var meaning: String {
        switch self {
        case .ok: "success"
        case .failure:
            "bad input or a failure (unknown names, bad counts, unreadable or wrong-schema files, unwritable "
                + "outputs, a tool that could not run)"
        case .slower:
            "slower: `compare`, `ab` or `gate check` found a regression, `conform` a design that breaks a rule "
                + "it does not declare, `gate agree` measurements that disagree"
        case .verificationFailed:
            "a scenario failed its own verification (`run`, the runs of `ab` and `gate`, `gate agree` on such a "
                + "file; a results file written marks it)"
        case .designFault:
            "a design crashed or hung its measuring process (`run`, `profile`; the file marks the row and "
                + "holds every other)"
        case .undecided:
            "undecided: `compare --paired` or `ab` left rows inconclusive (more pairs, or a larger budget, decide them)"
        }
    }

    /// The status a failure of `kind` exits with: a scenario that failed its verification 3, as
    /// `run`; every other failure 1.
    public init(_ kind: ResultsError.Kind) {
        self = kind == .verificationFailed ? .verificationFailed : .failure
    }

    /// The status as ArgumentParser's error: `throw ExitStatus.slower.code`.
    public var code: ExitCode { ExitCode(rawValue) }

    /// A command's help sentence for its statuses: "Exit status: 0 success; 2 …; 3 …; 1 bad input or
    /// a failure." — 0 and 1 always, the others `statuses` declares, each in the command's words
    /// (a command may give 1 words of its own too), in the table's order.
    static func sentence(_ statuses: KeyValuePairs<ExitStatus, String>) -> String {
        let words = Dictionary(statuses.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        let shown = ([.ok] + allCases.filter { $0 != .ok && $0 != .failure && words[$0] != nil } + [.failure])
            .map { status in
                "\(status.rawValue) \(words[status] ?? (status == .ok ? "success" : "bad input or a failure"))"
            }
        return "Exit status: " + shown.joined(separator: "; ") + "."
    }

    /// The table, a status a line, as `stepbench help` and the README print it.
    public static var table: String {
        allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: "\n")
    }
}

/// A command that ends with statuses besides 0 (success) and 1 (a failure): each in the
/// command's words. Its help ends with them (``ExitStatus/sentence(_:)``), and a test holds the
/// statuses its code throws to them.
protocol DocumentsExitStatuses {
    static var exitStatuses: KeyValuePairs<ExitStatus, String> { get }
}
