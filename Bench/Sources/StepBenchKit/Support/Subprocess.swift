import Foundation
import StepBenchScenarios

/// Runs a command found on PATH and collects its output (``ChildLaunch``).
enum Subprocess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Throws only if the command cannot be started; a non-zero exit is in `status`. `input` is
    /// written to the command's standard input (closed at once when nil); `environment` is
    /// added to this process's.
    static func run(
        _ command: String, _ arguments: [String], environment: [String: String] = [:], input: Data? = nil
    ) throws -> Result {
        let outcome = try ChildLaunch.command(command, arguments, environment: environment).run(input: input)
        return Result(status: outcome.status, stdout: outcome.stdoutText, stderr: outcome.stderrText)
    }
}
