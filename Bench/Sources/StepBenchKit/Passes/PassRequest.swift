import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// A pass of `stepbench run` asked of a child process (`stepbench child`, a ``ChildRequest``
/// on stdin; the answer, a ``ResultsFile``, on stdout): the same combinations and order as the
/// run that asks.
/// - `timing`: this binary in a process of its own, with the allocator as users run it.
/// - `counting`: a counting build of stepbench (`Contention.isCounting`; built with
///   `-Xswiftc -DSTEPBENCH_COUNTING`), each repetition recording what contention made the designs
///   do (``RepetitionResult/contention``) over ``ScenarioKind/countingElements(_:)``. Its timing
///   is not used: the counters cost a little.
public struct PassRequest: Codable, Equatable, Sendable {
    public enum Pass: String, Codable, Sendable { case timing, counting }

    public var pass: Pass
    /// The run the child makes: the asking run's, with the pass's repetitions and order seed.
    public var configuration: RunConfiguration

    /// `configuration`'s selection for `pass`: the timing pass at its repetitions, the counting
    /// pass at as many as the allocation pass (enough to see a count that follows thread timing
    /// vary), both in the order `orderSeed` gives.
    public init(_ configuration: RunConfiguration, pass: Pass, orderSeed: UInt64) {
        self.pass = pass
        self.configuration = configuration
        self.configuration.repetitions =
            pass == .counting
            ? RunPasses.allocationRepetitions(timing: configuration.effectiveRepetitions)
            : configuration.effectiveRepetitions
        self.configuration.orderSeed = orderSeed
    }

    /// Runs the pass in this process (the child's side); a counting pass fails in a build that
    /// does not count.
    public func run() throws -> ResultsFile {
        guard pass != .counting || Contention.isCounting else {
            throw ResultsError(
                "counting pass: this stepbench does not count contention; give the path of a counting build (one compiled with STEPBENCH_COUNTING defined, in a build folder of its own)"
            )
        }
        var configuration = configuration
        configuration.countsOnly = pass == .counting
        try configuration.validate()
        var runner = BenchmarkRunner(configuration: configuration)
        let tty = isatty(STDERR_FILENO) != 0
        runner.progress = { FileHandle.standardError.write(Data((tty ? "\r\u{1B}[K\($0)" : "\($0)\n").utf8)) }
        let file = runner.run()
        if tty { FileHandle.standardError.write(Data("\n".utf8)) }
        return file
    }

    /// Asks `child`, with `environment` added to this process's, and reads its answer; its
    /// progress goes to this process's standard error.
    public func ask(_ child: ChildProcess, environment: [String: String] = [:]) throws -> ResultsFile {
        let binary = child.executable
        let process = Process()
        process.executableURL = binary
        process.arguments = child.arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        do { try process.run() } catch {
            throw ResultsError("\(pass) pass: cannot start \(binary.path) (\(error.localizedDescription))")
        }
        input.fileHandleForWriting.write(try JSONEncoder().encode(ChildRequest.pass(self)))
        try? input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ResultsError(
                "\(pass) pass: \(binary.path) exited with \(process.terminationStatus); see the lines above")
        }
        do { return try JSONDecoder().decode(ResultsFile.self, from: data) } catch {
            throw ResultsError("\(pass) pass: the answer of \(binary.path) is not a results file (\(error))")
        }
    }
}

extension RunPasses {
    /// `file` with each repetition's contention counts taken from the counting pass's
    /// repetitions of the same row (cyclically, as allocations are). A row that failed its
    /// verification in the counting build is failed.
    public static func combine(_ file: ResultsFile, counting: ResultsFile) throws -> ResultsFile {
        try fill(file, from: counting, pass: "counting", \.contention, \.contentionRepetitions, elements: .mustMatch)
    }
}
