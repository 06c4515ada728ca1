import Foundation
@_spi(Measurement) import Stepping

/// The torture cases in child processes: one case against one design per process, so that a case
/// that crashes or deadlocks a design costs that case, not the run. Any executable that knows the
/// designs (a `stepbench` built with `StepBench.main(designs:)`, the bench's `SteppingTorture`)
/// answers with ``childMain(_:)``; ``runner(executable:arguments:)`` is the kit's runner that
/// starts it (``Conformance/Configuration/runTorture``).
///
/// The child's arguments are `CASE DESIGN SECONDS [SEED]` (a stochastic case's failure names
/// the seed that replays its random choices; none: a random one); it exits 0 when the design held every rule the
/// case checks, 1 with violations (a line each on stdout), 2 on bad arguments, 3 when its
/// watchdog fired after SECONDS (naming design, case and round); a signal means a crash. A
/// positive `STEPBENCH_STORM64_ROUNDS` in its environment caps storm-64's rounds.
extension TortureCase {
    /// The child's side: runs the case `arguments` name and exits with the statuses above.
    public static func childMain(_ arguments: [String]) -> Never {
        ChildGuard.dieWithParent()
        let seed = arguments.count == 4 ? UInt64(arguments[3]) : .random(in: .min ... .max)
        guard arguments.count == 3 || arguments.count == 4, let torture = TortureCase(rawValue: arguments[0]),
            let design = SteppingDesign(rawValue: arguments[1]), let seconds = Double(arguments[2]), seconds > 0,
            let seed
        else {
            FileHandle.standardError.write(
                Data(
                    """
                    torture child: expected CASE DESIGN SECONDS [SEED], got \(arguments)
                      cases: \(TortureCase.allCases.map(\.rawValue).joined(separator: ", "))
                      designs: \(SteppingDesign.described.map(\.rawValue).joined(separator: ", "))

                    """.utf8))
            exit(2)
        }
        // STEPBENCH_STORM64_ROUNDS caps storm-64's rounds: scripts/test's ThreadSanitizer step
        // sets it (a round on `mutex` takes 6 s there; the verdict on C4 is the debug run's).
        let stormRounds = ProcessInfo.processInfo.environment["STEPBENCH_STORM64_ROUNDS"]
        let limit = stormRounds.flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        if let stormRounds, limit == nil {
            FileHandle.standardError.write(
                Data(
                    "torture child: STEPBENCH_STORM64_ROUNDS must be a positive number of rounds, got '\(stormRounds)'\n"
                        .utf8))
            exit(2)
        }
        let progress = TortureProgress(
            label: "\(design) \(torture.rawValue)", seed: seed, roundLimit: torture == .storm64 ? limit : nil)
        progress.startWatchdog(seconds: seconds)
        let violations = torture.run(design, progress)
        if violations.isEmpty {
            print("ok: \(design) \(torture.rawValue)")
            exit(0)
        }
        for v in violations.prefix(20) { print("VIOLATION: \(design) \(torture.rawValue): \(v)") }
        exit(1)
    }

    /// A crash's cause in a child's output: the runtime's one-line message ("Fatal error: …"),
    /// or the crashed thread's first two frames from the runtime's backtrace (symbol and file:
    /// line; a release build's precondition failure carries no message).
    package static func crashCause(_ output: String) -> String? {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        if let line = lines.first(where: { $0.contains("Fatal error") || $0.contains(" failed: ") }) {
            return String(line)
        }
        guard let crashed = lines.firstIndex(where: { $0.hasSuffix("crashed:") }) else { return nil }
        let frames = lines[(crashed + 1)...].filter { $0.contains(" 0x") }.prefix(2).map { line -> String in
            // "  1   0x… Symbol + 685 in stepbench at /path/File.swift:314:13" → "Symbol (File.swift:314:13)"
            let afterAddress = line.split(separator: " ", omittingEmptySubsequences: true)
                .drop { !$0.hasPrefix("0x") }.dropFirst().joined(separator: " ")
            let symbol = afterAddress.components(separatedBy: " in ").first ?? afterAddress
            let location = afterAddress.components(separatedBy: " at ").last.map { ($0 as NSString).lastPathComponent }
            let bare = symbol.components(separatedBy: " + ").first ?? symbol
            return location.map { "\(bare) (\($0))" } ?? bare
        }
        return frames.isEmpty ? nil : frames.joined(separator: " ← ")
    }

    /// A runner that runs each case as `executable arguments CASE DESIGN SECONDS` (whose
    /// ``childMain(_:)`` answers) and reads its exit status: a crash, a stall, a violation or a
    /// ThreadSanitizer report is a violation, quoting the child's output.
    public static func runner(executable: URL, arguments: [String] = [])
        -> @Sendable (TortureCase, SteppingDesign, Double) -> [String]
    {
        { torture, design, seconds in
            let launch = ChildLaunch(
                executable: executable, arguments: arguments + [torture.rawValue, design.rawValue, String(seconds)])
            let outcome: ChildLaunch.Outcome
            // The child's own watchdog stops a stalled case after its seconds; this one, a stall
            // of the child's watchdog itself.
            do { outcome = try launch.run(mergingOutput: true, timeLimit: seconds * 10 + 120) } catch {
                return ["\(design) \(torture.rawValue): \(executable.path) did not start (\(error))"]
            }
            let output = outcome.stdoutText
            let (status, reason) = (outcome.status, outcome.reason)
            var violations: [String] = []
            if outcome.timedOut {
                violations.append(
                    "\(design) \(torture.rawValue): ran past its time limit and was stopped by its parent")
            } else if reason != .exit || status != 0 {
                let how =
                    reason == .uncaughtSignal
                    ? "crashed with signal \(status)" : status == 3 ? "stalled (watchdog)" : "exit \(status)"
                // A crash's cause, or, when none can be read, the end of the child's output.
                let cause = crashCause(output)
                violations.append(
                    "\(design) \(torture.rawValue): \(how)"
                        + (cause.map { ": \($0)" } ?? "\n\(output.suffix(1_500))"))
            }
            if output.contains("WARNING: ThreadSanitizer") {
                violations.append("\(design) \(torture.rawValue): ThreadSanitizer\n\(output.suffix(3_000))")
            }
            return violations
        }
    }
}
