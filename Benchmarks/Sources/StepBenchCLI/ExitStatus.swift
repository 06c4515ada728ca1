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

    /// The table, a status a line, as `stepbench help` and the README print it.
    public static var table: String {
        allCases.map { "\($0.rawValue) \($0.meaning)" }.joined(separator: "\n")
    }
}
