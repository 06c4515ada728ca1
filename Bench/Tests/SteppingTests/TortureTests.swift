import Foundation
import Stepping
import SteppingConformance
import Testing

/// The torture cases of the conformance kit, each case × design in a child process of its own
/// (`SteppingTorture`), so that a design that crashes or deadlocks in one case cannot hide the
/// others: ``childRunner`` is the runner `ConformanceTests` hands the kit. The child's watchdog
/// names design, case and round; a crash shows as its signal. Under ThreadSanitizer
/// (scripts/test) the child is instrumented too and any report fails the case.
@Suite("Torture: hostile upstreams and steppers, one child process per case")
struct TortureTests {
    static var executable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("SteppingTorture")
    }

    /// Runs the child with `arguments` (a case is given its watchdog's seconds as a third):
    /// (exit status or signal, its output).
    static func child(_ arguments: [String]) throws -> (
        status: Int32, reason: Process.TerminationReason, output: String
    ) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason, String(decoding: data, as: UTF8.self))
    }

    /// The kit's torture runner for the six designs: the case in a child process whose watchdog
    /// fires after `seconds`; a crash, a stall, a violation or a ThreadSanitizer report is a
    /// violation, with the child's output.
    static let childRunner: @Sendable (TortureCase, SteppingDesign, Double) -> [String] = { torture, design, seconds in
        let (status, reason, output): (Int32, Process.TerminationReason, String)
        do {
            (status, reason, output) = try child([torture.rawValue, design.rawValue, String(seconds)])
        } catch {
            return ["\(executable.path) did not start (\(error)): build it first (swift test builds it)"]
        }
        var violations: [String] = []
        if reason != .exit || status != 0 {
            let how =
                reason == .uncaughtSignal
                ? "crashed with signal \(status)" : status == 3 ? "stalled (watchdog)" : "exit \(status)"
            violations.append("\(design) \(torture.rawValue): \(how)\n\(output.suffix(1_500))")
        }
        if output.contains("WARNING: ThreadSanitizer") {
            violations.append("\(design) \(torture.rawValue): ThreadSanitizer\n\(output.suffix(3_000))")
        }
        return violations
    }

    @Test("the child knows exactly the kit's cases")
    func test_torture_caseListMatches() throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: Self.executable.path),
            "build it first: swift build --package-path Bench --product SteppingTorture (swift test builds it)")
        let (status, _, output) = try Self.child(["--list"])
        #expect(status == 0)
        #expect(output.split(separator: "\n").map(String.init) == TortureCase.allCases.map(\.rawValue))
    }
}
