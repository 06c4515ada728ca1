import ArgumentParser
import Foundation
import StepBenchKit
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// `stepbench`: measures the stepping designs. Tables go to stdout; progress and errors to stderr.
public struct StepBench: ParsableCommand {
    /// Named after the executable that runs it: `stepbench`, or an outside package's own
    /// executable (``main(designs:)``), whose usage and errors must say how to call it.
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: executableName,
            abstract: "Measure the stepping-subscriber designs: throughput, latency, allocations.",
            discussion: "Exit status, the same in every command:\n" + ExitStatus.table,
            // the hidden children the tool starts itself, and the old names of moved commands
            subcommands: [Child.self, TortureChild.self, ConformRuleChild.self] + renamed,
            // by purpose, as `stepbench help` lists them
            groupedSubcommands: [
                CommandGroup(name: "Measure", subcommands: [Run.self, Profile.self, Conform.self, Ab.self]),
                CommandGroup(name: "Read", subcommands: [List.self, Show.self, Merge.self]),
                CommandGroup(name: "Decide", subcommands: [Compare.self, Noise.self, Gate.self]),
                CommandGroup(name: "History", subcommands: [History.self]),
            ])
    }

    /// This process's executable's file name (`stepbench` if it cannot be told).
    static let executableName: String = {
        let name = URL(fileURLWithPath: CommandLine.arguments.first ?? "").lastPathComponent
        return name.isEmpty ? "stepbench" : name
    }()

    public init() {}

    /// The whole tool with `designs` beside the built-ins: what `stepbench` is, for an
    /// executable of your own package that describes designs of its own. Call it from that
    /// executable's `main.swift`:
    ///
    /// ```swift
    /// import StepBenchCLI
    /// StepBench.main(designs: [.semaphore])
    /// ```
    ///
    /// Every command takes the designs by name (`--design semaphore,atomic`), and their rows are
    /// measured in the same session as the built-ins'. The tool's child processes (measuring
    /// passes, callgrind profiles, torture cases) run this same executable, so they know the
    /// designs too. Reading each design here describes it (a `static let` is described when first
    /// read) before the command line, or a child's request, names it. `directRows`: the direct
    /// rows of designs that stand for a library of their own (``DirectRow``: `direct-sync`);
    /// `plainRows`: their libraries in plain programs (``PlainRow``: `plain-sync`, `plain-upstream`).
    public static func main(
        designs: [SteppingDesign], directRows: [DirectRow] = [], plainRows: [PlainRow] = []
    ) -> Never {
        _ = designs  // read, so described
        DirectRow.register(directRows)
        PlainRow.register(plainRows)
        mainWithExitCodes()
    }

    /// Runs the tool with the exit statuses of the discussion above.
    ///
    /// A measuring child (`stepbench child`, a request on stdin) is answered before the command
    /// tree is parsed: parsing builds every command's arguments, and those allocations shaped the
    /// heap the child's measured window then allocated in, so a change to any command's help
    /// moved a path's exact instruction count (promise-cancel `locked` +0.5%, all of it in the
    /// allocator). The child's window now follows the request alone.
    public static func mainWithExitCodes() -> Never {
        if CommandLine.arguments.count == 2, CommandLine.arguments[1] == Child.name {
            do { try Child().run() } catch { exit(for: commandLineError(error, parsing: false)) }
            Foundation.exit(ExitStatus.ok.rawValue)
        }
        var command: ParsableCommand
        do { command = try parseAsRoot() } catch { exit(for: error) }
        do { try command.run() } catch { exit(for: commandLineError(error, parsing: false)) }
        Foundation.exit(ExitStatus.ok.rawValue)
    }

    /// Reports `error` and exits: ArgumentParser's messages and statuses, except that usage errors
    /// exit 1, not 64 (scripts tell 1, their input was wrong, from 2 and 3, what was measured).
    static func exit(for error: Error) -> Never {
        if let failure = error as? ResultsError, ExitStatus(failure.kind) != .failure {
            printError(fullMessage(for: error) + "\n")
            Foundation.exit(ExitStatus(failure.kind).rawValue)
        }
        if exitCode(for: error) == .validationFailure {
            printError(fullMessage(for: error) + "\n")
            Foundation.exit(ExitStatus.failure.rawValue)
        }
        exit(withError: error)
    }

    /// The one mapping from the kit's errors to the command line's. A bad setting is named by the
    /// flag that sets it; found while `parsing` (a command's `validate()`), it is a usage error
    /// (message and usage), later a failure (the message). Everything else is reported as it is:
    /// ``ResultsError`` and the measuring errors as failures (exit 1; a ``ResultsError`` of kind
    /// `verificationFailed` exits 3, as `run`), ``ExitCode`` by its status.
    static func commandLineError(_ error: Error, parsing: Bool) -> Error {
        guard let e = error as? ConfigurationError else { return error }
        let message = "\(flag(for: e.setting)): \(e.message)"
        return parsing ? ValidationError(message) : Failure(description: message)
    }

    /// A failure after parsing: "Error: <description>", exit status 1.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The flag that sets `setting`.
    static func flag(for setting: ConfigurationError.Setting) -> String {
        switch setting {
        case .designs: "--design"
        case .scenarios: "--scenario"
        case .threads: "--threads"
        case .elements: "--elements"
        case .repetitions: "--repetitions"
        case .repetitionBudget: "--repetition-budget"
        case .allowDebug: "--allow-debug"
        case .output: "--output"
        }
    }

    /// Runs `body` (part of a command's `validate()`), its errors reported as usage errors.
    static func validating(_ body: () throws -> Void) throws {
        do { try body() } catch { throw commandLineError(error, parsing: true) }
    }
}
