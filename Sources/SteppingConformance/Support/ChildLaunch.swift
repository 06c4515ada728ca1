import Foundation
import Synchronization

/// How the bench starts a child process, written once: the measuring passes, the profile's
/// callgrind runs, the conformance kit's rule and torture children, and the commands the tool
/// asks (git, objdump, strip). The child gets this process's environment with `environment`
/// and ``ChildGuard/environment`` added (it dies with this process), and the thread that starts
/// it waits for it (see ``ChildGuard``). ``run(input:mergingOutput:timeLimit:directory:)`` feeds its standard input
/// and drains both output pipes at once, so that neither can fill and stall it (in `directory`, when given); a caller that
/// reads the output as it comes (`stepbench run`'s watchdog) takes ``process(in:)`` instead.
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

    /// A command found on PATH. On Linux it is started through util-linux's `setpriv
    /// --pdeathsig KILL` (where installed, as on every Debian), so that it dies with this
    /// process as the bench's own children do (``ChildGuard``): a `git`, `objdump` or `strip`
    /// outlives no stopped or killed stepbench.
    public static func command(_ name: String, _ arguments: [String], environment: [String: String] = [:])
        -> ChildLaunch
    {
        #if os(Linux)
            if setprivKillsWithParent {
                return ChildLaunch(
                    executable: URL(fileURLWithPath: setpriv),
                    arguments: ["--pdeathsig", "KILL", "--", name] + arguments,
                    environment: environment)
            }
        #endif
        return ChildLaunch(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: [name] + arguments, environment: environment)
    }

    static let setpriv = "/usr/bin/setpriv"

    /// Whether this machine's `setpriv` takes `--pdeathsig` (util-linux 2.33 and later), asked
    /// once per process.
    static let setprivKillsWithParent: Bool = {
        guard FileManager.default.isExecutableFile(atPath: setpriv),
            let help = try? ChildLaunch(executable: URL(fileURLWithPath: setpriv), arguments: ["--help"]).run(
                timeLimit: 20)
        else { return false }
        return help.stdoutText.contains("--pdeathsig")
    }()

    /// How a child ended and what it wrote.
    public struct Outcome {
        public var status: Int32
        public var reason: Process.TerminationReason
        public var stdout: Data
        /// Empty when the output was merged into `stdout`.
        public var stderr: Data

        /// It ran longer than its time limit and was killed (``run(input:mergingOutput:timeLimit:directory:)``).
        public var timedOut = false
        /// Its standard input was closed before all of `input` was written: it exited, or closed
        /// it, without reading its request.
        public var inputRefused = false

        /// It exited, with status 0.
        public var succeeded: Bool { reason == .exit && status == 0 && !timedOut }
        public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    }

    /// The process of this launch, set up and not started; it runs in `directory` (nil: this
    /// process's folder).
    public func process(in directory: URL? = nil) -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            .merging(ChildGuard.environment) { $1 }
        return process
    }

    /// Runs the child to its end: `input` on its standard input (closed at once when nil;
    /// written from a thread of its own while both outputs are drained, so that no pipe can fill
    /// and stall either side), its standard error into `stdout` too when `mergingOutput` (in the
    /// order written). With `timeLimit`, a child still running that many seconds after it
    /// started is killed (SIGKILL) and its outcome says ``Outcome/timedOut``. A child that exits
    /// without reading its request cannot take this process down: the write's broken pipe is an
    /// error it handles (``Outcome/inputRefused``), not a SIGPIPE. Throws only if it cannot start.
    public func run(
        input: Data? = nil, mergingOutput: Bool = false, timeLimit: Double? = nil, directory: URL? = nil
    ) throws -> Outcome {
        let process = process(in: directory)
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = mergingOutput ? out : err
        process.standardInput = stdin
        try process.run()
        let refused = Mutex(false)
        let errors = Mutex<Data>(Data())
        let done = DispatchSemaphore(value: 0)
        var helpers = 1
        Thread {
            if !Self.feed(stdin.fileHandleForWriting, input) { refused.withLock { $0 = true } }
            done.signal()
        }.start()
        if !mergingOutput {
            helpers += 1
            Thread {
                let data = err.fileHandleForReading.readDataToEndOfFile()
                errors.withLock { $0 = data }
                done.signal()
            }.start()
        }
        let timedOut = Mutex(false)
        let finished = DispatchSemaphore(value: 0)
        if let timeLimit {
            let pid = process.processIdentifier
            Thread {
                // The child leads its own process group (Foundation starts it so): the group goes
                // too, so that a pipeline it started (bash -c 'objdump | grep') closes the
                // output this thread's caller is reading. Only a child still running is killed.
                if finished.wait(timeout: .now() + timeLimit) == .timedOut, process.isRunning {
                    timedOut.withLock { $0 = true }
                    kill(-pid, SIGKILL)
                    kill(pid, SIGKILL)
                }
            }.start()
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        finished.signal()
        for _ in 0..<helpers { done.wait() }
        var outcome = Outcome(
            status: process.terminationStatus, reason: process.terminationReason, stdout: data,
            stderr: errors.withLock { $0 })
        // Killed by the timer, not ended on its own just before it fired.
        outcome.timedOut =
            timedOut.withLock { $0 } && process.terminationReason == .uncaughtSignal
            && process.terminationStatus == SIGKILL
        outcome.inputRefused = refused.withLock { $0 }
        return outcome
    }

    /// Writes `data` (if any) to a child's standard input and closes it; false if the child closed
    /// it first (it exited, or closed it, without reading). SIGPIPE is blocked in the calling
    /// thread while it writes, so that such a write fails with EPIPE instead of killing this
    /// process; the signal it raised is taken off the thread before its mask is restored. The
    /// process's own handling of SIGPIPE, and its children's, stay as they were.
    public static func feed(_ handle: FileHandle, _ data: Data?) -> Bool {
        defer { try? handle.close() }
        guard let data, !data.isEmpty else { return true }
        #if os(Linux)
            var pipe = sigset_t(), previous = sigset_t()
            sigemptyset(&pipe)
            sigaddset(&pipe, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipe, &previous)
            defer {
                var pending = sigset_t()
                sigpending(&pending)
                if sigismember(&pending, SIGPIPE) == 1, sigismember(&previous, SIGPIPE) == 0 {
                    var zero = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&pipe, nil, &zero)
                }
                pthread_sigmask(SIG_SETMASK, &previous, nil)
            }
        #elseif canImport(Darwin)
            _ = fcntl(handle.fileDescriptor, F_SETNOSIGPIPE, 1)
        #endif
        do {
            try handle.write(contentsOf: data)
            return true
        } catch {
            return false
        }
    }
}
