import Foundation
import Synchronization

/// How the bench starts a child process, written once: the measuring passes, the profile's
/// callgrind runs, the conformance kit's rule and torture children, and the commands the tool
/// asks (git, objdump, strip). The child gets this process's environment with `environment`
/// and ``ChildGuard/environment`` added (it dies with this process), and the thread that starts
/// it waits for it (see ``ChildGuard``). ``run(input:mergingOutput:)`` feeds its standard input
/// and drains both output pipes at once, so that neither can fill and stall it; a caller that
/// reads the output as it comes (`stepbench run`'s watchdog) takes ``process()`` instead.
@_spi(StepBench)
public struct ChildLaunch: Sendable {
    public var executable: URL
    public var arguments: [String]
    /// Added to this process's environment (``ChildGuard/environment`` is added last).
    public var environment: [String: String]

    public init(executable: URL, arguments: [String], environment: [String: String] = [:]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// A command found on PATH.
    public static func command(_ name: String, _ arguments: [String], environment: [String: String] = [:])
        -> ChildLaunch
    {
        ChildLaunch(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: [name] + arguments, environment: environment)
    }

    /// How a child ended and what it wrote.
    public struct Outcome {
        public var status: Int32
        public var reason: Process.TerminationReason
        public var stdout: Data
        /// Empty when the output was merged into `stdout`.
        public var stderr: Data

        /// It exited, with status 0.
        public var succeeded: Bool { reason == .exit && status == 0 }
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// The process of this launch, set up and not started.
    public func process() -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            .merging(ChildGuard.environment) { $1 }
        return process
    }

    /// Runs the child to its end: `input` on its standard input (closed at once when nil; a
    /// request of a few KiB, written before the output is read), its standard error into
    /// `stdout` too when `mergingOutput` (in the order written). Throws only if it cannot start.
    public func run(input: Data? = nil, mergingOutput: Bool = false) throws -> Outcome {
        let process = process()
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = mergingOutput ? out : err
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(input) }
        try? stdin.fileHandleForWriting.close()
        let errors = Mutex<Data>(Data())
        let done = DispatchSemaphore(value: 0)
        if !mergingOutput {
            Thread {
                let data = err.fileHandleForReading.readDataToEndOfFile()
                errors.withLock { $0 = data }
                done.signal()
            }.start()
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if !mergingOutput { done.wait() }
        return Outcome(
            status: process.terminationStatus, reason: process.terminationReason, stdout: data,
            stderr: errors.withLock { $0 })
    }
}
