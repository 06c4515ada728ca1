import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// A pass of `stepbench run` asked of a child process (`stepbench child`, a ``ChildRequest``
/// on stdin; the answer, a ``ResultsFile``, on stdout): the same combinations and order as the
/// run that asks.
/// - `timing`: this binary in a process of its own, with the allocator as users run it.
/// - `allocations`: exact allocation counts (jemalloc's thread caches off, its built-in setting).
/// - `counting`: a counting build of stepbench (`Contention.isCounting`; built with
///   the bench package's `Counting` trait), each repetition recording what contention made the designs
///   do (``RepetitionResult/contention``) over ``ScenarioKind/countingElements(_:)``. Its timing
///   is not used: the counters cost a little.
///
/// **A design cannot take the pass down.** Before each repetition the child writes a journal
/// line, `step N` (the combination's index), on stdout ahead of its answer, and `done` when every
/// combination has run. When the child dies (a signal, an exit of its own) or writes nothing for
/// the watchdog's seconds (it is then killed) in a combination, that combination is a ``Fault``:
/// the pass starts again in a new process with it left out (its row `crashed` or `hung`), as
/// often as it takes. A fault after the child's complete answer costs no row (the answer
/// stands; the fault is reported); one after `done` but before a complete answer, or before any
/// combination, is an error that says so, charged to no combination.
public struct PassRequest: Codable, Equatable, Sendable {
    public enum Pass: String, Codable, Sendable { case timing, allocations, counting }

    /// A combination an earlier process of the pass died in, left out of this one.
    public struct Fault: Codable, Equatable, Sendable {
        /// Its index in the run's combinations (``BenchmarkRunner/combinations``).
        public var combination: Int
        /// `.crashed` or `.hung`.
        public var status: ResultsFile.Status
        /// What happened, for the row's `failure`.
        public var failure: String

        public init(combination: Int, status: ResultsFile.Status, failure: String) {
            self.combination = combination
            self.status = status
            self.failure = failure
        }

        /// The faults `file`'s rows record (a row per combination, in order), for the next pass.
        public static func recorded(in file: ResultsFile) -> [Fault] {
            file.rows.indices.compactMap { i in
                file.rows[i].status.isFault
                    ? Fault(combination: i, status: file.rows[i].status, failure: file.rows[i].failure ?? "") : nil
            }
        }
    }

    public var pass: Pass
    /// The run the child makes: the asking run's, with the pass's repetitions and order seed.
    public var configuration: RunConfiguration
    /// Combinations not to run (an earlier process, of this pass or one before it, died in them).
    public var faults: [Fault] = []

    /// `configuration`'s selection for `pass`: the timing pass at its repetitions, the allocation
    /// and counting passes at ``RunPasses/allocationRepetitions(timing:)`` (enough to see a count
    /// that follows thread timing vary), each in the order `orderSeed` gives.
    public init(_ configuration: RunConfiguration, pass: Pass, orderSeed: UInt64, faults: [Fault] = []) {
        self.pass = pass
        self.configuration = configuration
        self.configuration.repetitions =
            pass == .timing
            ? configuration.effectiveRepetitions
            : RunPasses.allocationRepetitions(timing: configuration.effectiveRepetitions)
        self.configuration.orderSeed = orderSeed
        self.faults = faults
    }

    /// Seconds a measuring child may write nothing (no repetition begun, no answer) before the
    /// watchdog kills it: far above any repetition of the presets (a few seconds each).
    public static let defaultWatchdog: Double = 120

    /// Runs the pass in this process (the child's side), writing the journal to stdout; a
    /// counting pass fails in a build that does not count.
    public func run() throws -> ResultsFile {
        guard pass != .counting || Contention.isCounting else {
            throw ResultsError(
                .toolFailed,
                "counting pass: this stepbench does not count contention; give the path of a counting build (swift build -c release --product stepbench --package-path Benchmarks --traits Counting, then a copy of its binary)"
            )
        }
        var configuration = configuration
        configuration.countsOnly = pass != .timing
        try configuration.validate()
        var runner = BenchmarkRunner(configuration: configuration)
        runner.faults = faults
        runner.journal = { FileHandle.standardOutput.write(Data("step \($0)\n".utf8)) }
        runner.finished = { FileHandle.standardOutput.write(Data("\(Attempt.done)\n".utf8)) }
        let tty = isatty(STDERR_FILENO) != 0
        runner.progress = { FileHandle.standardError.write(Data((tty ? "\r\u{1B}[K\($0)" : "\($0)\n").utf8)) }
        let file = runner.run()
        if tty { FileHandle.standardError.write(Data("\n".utf8)) }
        return file
    }

    /// Asks `child`, with `environment` added to this process's, and reads its answer; its
    /// progress goes to this process's standard error. A child that dies in a combination, or
    /// is silent for `watchdog` seconds in one, is reported (`report`) and started again
    /// without it; one that dies before it begins a combination is an error.
    public func ask(
        _ child: ChildProcess, environment: [String: String] = [:], watchdog: Double = defaultWatchdog,
        report: (String) -> Void = { FileHandle.standardError.write(Data("\($0)\n".utf8)) }
    ) throws -> ResultsFile {
        var request = self
        let labels = BenchmarkRunner.combinations(of: configuration).map(\.label)
        while true {
            let attempt = try request.attempt(child, environment: environment, watchdog: watchdog)
            guard let fault = attempt.fault else { return try attempt.answer() }
            if attempt.finished, let answer = try? attempt.answer() {
                report(
                    "\(pass) pass: \(child.executable.path) \(fault.what) after its complete answer: the answer stands, no row is charged"
                )
                return answer
            }
            if attempt.finished {
                throw ResultsError(
                    .toolFailed,
                    "\(pass) pass: \(child.executable.path) \(fault.what) after it had run every combination, before its answer was complete (no combination is to blame); see the lines above"
                )
            }
            guard let step = attempt.step else {
                throw ResultsError(
                    .toolFailed,
                    "\(pass) pass: \(child.executable.path) \(fault.what) before it began a combination; see the lines above"
                )
            }
            guard !request.faults.contains(where: { $0.combination == step }) else {
                throw ResultsError(
                    .toolFailed,
                    "\(pass) pass: \(child.executable.path) \(fault.what) in \(labels[step]), which it was asked to leave out; see the lines above"
                )
            }
            let failure = "\(pass) pass: \(fault.what) in \(labels[step])"
            report("FAULT \(labels[step]): \(fault.what); the \(pass) pass goes on without it in a new process")
            request.faults.append(Fault(combination: step, status: fault.status, failure: failure))
        }
    }

    /// How one process of the pass ended.
    struct Attempt {
        /// Its standard output after the journal: the answer.
        var answerData: Data
        /// The last combination it began, from the journal.
        var step: Int?
        /// Whether its journal says every combination ran (`done`).
        var finished = false
        /// Why it did not answer: nil when it exited 0.
        var fault: (status: ResultsFile.Status, what: String)?
        var executable: URL
        var pass: Pass

        /// `output` read once: the journal's lines (`step N`, then `done`), then the answer.
        init(output: Data, executable: URL, pass: Pass) {
            var rest = output[...]
            while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: rest[..<newline], as: UTF8.self)
                if line == Self.done {
                    finished = true
                } else if line.hasPrefix("step ") {
                    step = Int(line.dropFirst(5)) ?? step
                } else {
                    break
                }
                rest = rest[(newline + 1)...]
            }
            answerData = Data(rest)
            self.executable = executable
            self.pass = pass
        }

        func answer() throws -> ResultsFile {
            do { return try JSONDecoder().decode(ResultsFile.self, from: answerData) } catch {
                throw ResultsError(
                    .toolFailed, "\(pass) pass: the answer of \(executable.path) is not a results file (\(error))")
            }
        }

        /// The journal's last line: every combination has run.
        static let done = "done"
    }

    /// One process of the pass: started, fed the request, watched until it exits or the
    /// watchdog kills it.
    func attempt(_ child: ChildProcess, environment: [String: String], watchdog: Double) throws -> Attempt {
        let binary = child.executable
        let process = ChildLaunch(executable: binary, arguments: child.arguments, environment: environment).process()
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        do { try process.run() } catch {
            throw ResultsError(.toolFailed, "\(pass) pass: cannot start \(binary.path) (\(error.localizedDescription))")
        }
        // From a thread of its own: a child that never reads must not stall this one, and one
        // that exits first makes the write fail (handled), not kill this process (SIGPIPE).
        let request = try JSONEncoder().encode(ChildRequest.pass(self))
        Thread { _ = ChildLaunch.feed(input.fileHandleForWriting, request) }.start()
        // The reader keeps the output and the time of its last byte; this thread watches.
        let received = Mutex<(data: Data, at: UInt64, done: Bool)>((Data(), monotonicNanoseconds(), false))
        let reader = Thread {
            let handle = output.fileHandleForReading
            while true {
                let chunk = handle.availableData
                received.withLock {
                    if chunk.isEmpty { $0.done = true } else { $0.data.append(chunk); $0.at = monotonicNanoseconds() }
                }
                if chunk.isEmpty { return }
            }
        }
        reader.start()
        var hung = false
        while !received.withLock({ $0.done }) || process.isRunning {
            // The last byte's time first, then now: read the other way round, a byte arriving
            // between the two reads made the difference negative (a UInt64 trap in the parent).
            let lastByte = received.withLock { $0.at }
            let silent = Double(monotonicNanoseconds() - lastByte) / 1e9
            if !hung, silent > watchdog {
                hung = true
                kill(process.processIdentifier, SIGKILL)
            }
            usleep(20_000)
        }
        process.waitUntilExit()
        let data = received.withLock { $0.data }
        var attempt = Attempt(output: data, executable: binary, pass: pass)
        if hung {
            attempt.fault = (.hung, "no progress for \(Self.seconds(watchdog)) s; stopped by the watchdog (--watchdog)")
        } else if process.terminationReason == .uncaughtSignal {
            let signal = process.terminationStatus
            attempt.fault = (.crashed, "crashed with signal \(signal) (\(String(cString: strsignal(signal))))")
        } else if process.terminationStatus != 0 {
            attempt.fault = (.crashed, "the process exited with status \(process.terminationStatus)")
        }
        return attempt
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
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
