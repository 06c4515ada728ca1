import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance

/// How the kit starts one of its child processes: an executable and the arguments that make it
/// answer a ``ChildRequest`` (the command line's hidden child command: the command line owns
/// its commands and hands the kit this value). The request goes on the child's standard input,
/// the answer comes back on its standard output.
public struct ChildProcess: Equatable, Sendable {
    public var executable: URL
    public var arguments: [String]

    public init(executable: URL, arguments: [String]) {
        self.executable = executable
        self.arguments = arguments
    }

    /// This process's own executable, started with `arguments`.
    public static func this(arguments: [String]) -> ChildProcess {
        ChildProcess(
            executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), arguments: arguments)
    }

    /// The same child of another executable (a stripped copy of this one, a counting build).
    public func running(_ executable: URL) -> ChildProcess {
        ChildProcess(executable: executable, arguments: arguments)
    }

    /// The command that runs this child under `valgrind`'s callgrind, writing its dumps (with
    /// per-instruction counts, names uncompressed) to `output`.
    func underCallgrind(_ valgrind: String, output: URL) -> (command: String, arguments: [String]) {
        let tool = [
            "--tool=callgrind", "--callgrind-out-file=\(output.path)", "--dump-instr=yes", "--compress-strings=no",
            "--compress-pos=no",
        ]
        return (valgrind, tool + [executable.path] + arguments)
    }
}

/// What a measuring child measures, and so the environment it is started with: written once,
/// for every pass, profile and path run (with ``ChildGuard/environment``, which every launcher
/// adds).
public enum Measuring: Sendable {
    /// Time, with the allocator as users run it: jemalloc's thread caches on (its default).
    case time
    /// Exact counts (allocations, contention): the thread caches off, so that every allocation
    /// reaches jemalloc's counters; the same hash seeds in every run.
    case counts
    /// Exact instructions under callgrind: the allocator as timed, the same hash seeds in every
    /// run (so two profiles of one build count the same instructions).
    case instructions

    /// The variables to add to this process's environment.
    public var environment: [String: String] {
        switch self {
        case .time: ["MALLOC_CONF": "tcache:true"]
        case .counts: ["MALLOC_CONF": "tcache:false", "SWIFT_DETERMINISTIC_HASHING": "1"]
        case .instructions: ["MALLOC_CONF": "tcache:true", "SWIFT_DETERMINISTIC_HASHING": "1"]
        }
    }

    /// Runs `command` (found on PATH, or a path) to its end in this environment, `input` on its
    /// standard input; its standard output. A child still running after `timeLimit` seconds is
    /// killed: a ``ChildFault`` `.hung`; one that dies of a signal, a ``ChildFault`` `.crashed`.
    /// Throws, naming `what` ("profile: the path child of locked"), when it cannot start or
    /// exits otherwise than with 0 (the last lines of its standard error).
    func run(_ command: String, _ arguments: [String], input: Data? = nil, what: String, timeLimit: Double? = nil)
        throws -> Data
    {
        let result: ChildLaunch.Outcome
        do {
            result = try ChildLaunch.command(command, arguments, environment: environment).run(
                input: input, timeLimit: timeLimit)
        } catch {
            throw ScenarioFailure(
                "profile: cannot start \(command) (\(error)); install valgrind (apt-get install valgrind)")
        }
        let tail = Self.tail(of: result.stderrText)
        if result.timedOut, let timeLimit {
            throw ChildFault(
                status: .hung,
                what: "\(what): no answer in \(PassRequest.seconds(timeLimit)) s, stopped by its time limit")
        }
        // valgrind ends with the signal that ended its guest; a crash it reports exits 1 or more
        // with "Process terminating with default action of signal" on its standard error
        if result.reason == .uncaughtSignal || result.stderrText.contains("terminating with default action of signal") {
            throw ChildFault(status: .crashed, what: "\(what): crashed: \(tail)")
        }
        guard result.status == 0 else {
            throw ScenarioFailure("\(what) exited \(result.status): \(tail)")
        }
        return result.stdout
    }

    /// The last lines a child wrote on its standard error, for a message: valgrind's own lines
    /// ("==PID== …", its summary, which it writes after its guest's last word) left out, so that
    /// the child's error is what the message shows; all of them when the child wrote none.
    static func tail(of stderr: String, lines: Int = 4) -> String {
        let all = stderr.split(separator: "\n")
        let own = all.filter { !isValgrindLine($0) }
        return (own.isEmpty ? all : own).suffix(lines).joined(separator: " / ")
    }

    private static func isValgrindLine(_ line: Substring) -> Bool {
        guard line.hasPrefix("=="), let end = line.dropFirst(2).firstIndex(of: "=") else { return false }
        let pid = line[line.index(line.startIndex, offsetBy: 2)..<end]
        return !pid.isEmpty && pid.allSatisfy(\.isNumber) && line[end...].hasPrefix("==")
    }
}

/// A profiling child that crashed or hung: its target's rows are missing, the profile goes on.
public struct ChildFault: Error, CustomStringConvertible {
    /// `.crashed` or `.hung`.
    public var status: ResultsFile.Status
    public var what: String
    public var description: String { what }
}
