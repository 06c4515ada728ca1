import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// The counting pass, asked of a counting build of stepbench (`Contention.isCounting`; built
/// with `-Xswiftc -DSTEPBENCH_COUNTING`): the same combinations and order as the run that asks,
/// each repetition recording what contention made the designs do (``RepetitionResult/contention``).
/// Its timing is not used: the counters cost a little.
public struct CountingRequest: Codable, Equatable, Sendable {
    public var designs: [String]
    public var scenarios: [ScenarioKind]
    public var threads: [Int]
    public var elements: Int?
    public var preset: Preset
    public var repetitions: Int
    public var warmup: Bool
    public var orderSeed: UInt64
    public var allowDebug: Bool

    /// Repetitions of the counting pass: as many as the allocation pass, enough to see a count
    /// that follows thread timing vary.
    public static func repetitions(timing: Int) -> Int { RunPasses.allocationRepetitions(timing: timing) }

    public init(_ configuration: RunConfiguration, orderSeed: UInt64) {
        designs = configuration.designs.map(\.rawValue)
        scenarios = configuration.scenarios
        threads = configuration.threads
        elements = configuration.elements
        preset = configuration.preset
        repetitions = Self.repetitions(timing: configuration.effectiveRepetitions)
        warmup = configuration.warmup
        self.orderSeed = orderSeed
        allowDebug = configuration.allowDebug
    }

    /// Runs the pass in this process (the child's side); fails in a build that does not count.
    public func run() throws -> ResultsFile {
        guard Contention.isCounting else {
            throw ResultsError(
                "counting pass: this stepbench does not count contention; give the path of a counting build (swift build -c release -Xswiftc -DSTEPBENCH_COUNTING --scratch-path <another folder>)"
            )
        }
        var configuration = RunConfiguration()
        configuration.designs = try designs.map { name in
            guard let design = SteppingDesign(rawValue: name) else {
                throw ResultsError("counting pass: unknown design '\(name)' (the two builds differ?)")
            }
            return design
        }
        configuration.scenarios = scenarios
        configuration.threads = threads
        configuration.elements = elements
        configuration.preset = preset
        configuration.repetitions = repetitions
        configuration.warmup = warmup
        configuration.orderSeed = orderSeed
        configuration.allowDebug = allowDebug
        configuration.countsOnly = true
        try configuration.validate()
        var runner = BenchmarkRunner(configuration: configuration)
        let tty = isatty(STDERR_FILENO) != 0
        runner.progress = { FileHandle.standardError.write(Data((tty ? "\r\u{1B}[K\($0)" : "\($0)\n").utf8)) }
        let file = runner.run()
        if tty { FileHandle.standardError.write(Data("\n".utf8)) }
        return file
    }

    /// Asks the counting build at `binary` (its `child` command) and reads its answer; its
    /// progress goes to this process's standard error.
    public func ask(_ binary: URL) throws -> ResultsFile {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["child"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        do { try process.run() } catch {
            throw ResultsError("counting pass: cannot start \(binary.path) (\(error.localizedDescription))")
        }
        input.fileHandleForWriting.write(try JSONEncoder().encode(ChildRequest.counting(self)))
        try? input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ResultsError(
                "counting pass: \(binary.path) exited with \(process.terminationStatus); see the lines above")
        }
        do { return try JSONDecoder().decode(ResultsFile.self, from: data) } catch {
            throw ResultsError("counting pass: the answer of \(binary.path) is not a results file (\(error))")
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
