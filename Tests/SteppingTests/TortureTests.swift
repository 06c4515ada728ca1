import Foundation
import Stepping
import Testing

/// The torture suite: every hostile case of `SteppingTorture` against every design, each in a
/// child process, so that a design that crashes or deadlocks in one case cannot hide the others.
/// The child's watchdog names design, case and round; a crash shows as its signal. Under
/// ThreadSanitizer (scripts/test) the child is instrumented too and any report fails the case.
@Suite("Torture: hostile upstreams and steppers, one child process per case")
struct TortureTests {
    enum Case: String, CaseIterable {
        case storm64 = "storm-64", slowRequest = "slow-request", reentrantRequest = "reentrant-request"
        case cancelInsideRequest = "cancel-inside-request", cancelAfterSubscribe = "cancel-after-subscribe"
        case releaseCallback = "release-callback", reentrantCompletion = "reentrant-completion"
        case demandIgnoring = "demand-ignoring", doubleCompletion = "double-completion"

        /// The rule a design that declares it broken fails in this case (a known issue), if any.
        var exposes: SteppingRule? {
            switch self {
            case .releaseCallback: .r3
            case .reentrantCompletion: .c6
            case .demandIgnoring: .s1
            default: nil
            }
        }
    }

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

    @Test("the child knows exactly these cases")
    func test_torture_caseListMatches() throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: Self.executable.path),
            "build it first: swift build --product SteppingTorture (swift test builds it)")
        let (status, _, output) = try Self.child(["--list"])
        #expect(status == 0)
        #expect(output.split(separator: "\n").map(String.init) == Case.allCases.map(\.rawValue))
    }

    @Test("every design survives every case", arguments: Case.allCases, SteppingDesign.allCases)
    func test_torture(torture: Case, design: SteppingDesign) throws {
        // A deadlock is expected only where a known issue is one (R3: release under the lock):
        // keep that wait short.
        let watchdog = torture.exposes == .r3 && design.traits.knownIssue(.r3) != nil ? 5 : 60
        let (status, reason, output) = try Self.child([torture.rawValue, design.rawValue, String(watchdog)])
        let check = {
            let how =
                reason == .uncaughtSignal
                ? "crashed with signal \(status)" : status == 3 ? "stalled (watchdog)" : "exit \(status)"
            #expect(reason == .exit && status == 0, "\(design) \(torture.rawValue): \(how)\n\(output.suffix(1_500))")
            #expect(
                !output.contains("WARNING: ThreadSanitizer"),
                "\(design) \(torture.rawValue): ThreadSanitizer\n\(output.suffix(3_000))")
        }
        if let rule = torture.exposes {
            expecting(design, breaks: rule, in: check)
        } else {
            check()
        }
    }
}
