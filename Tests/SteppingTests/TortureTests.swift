import Foundation
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
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

    /// Runs the child with `arguments`: (exit status, its output).
    static func child(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let outcome = try ChildLaunch(executable: executable, arguments: arguments).run(mergingOutput: true)
        return (outcome.status, outcome.stdoutText)
    }

    /// The kit's torture runner for the six designs: each case in a child process whose watchdog
    /// fires after the kit's seconds; a crash, a stall, a violation or a ThreadSanitizer report is
    /// a violation, with the child's output.
    static let childRunner = TortureCase.runner(executable: executable)

    @Test("STEPBENCH_STORM64_ROUNDS caps storm-64's rounds in the child; a value that is no positive count is refused")
    func test_torture_stormRoundsCap() throws {
        let capped = try ChildLaunch(
            executable: Self.executable, arguments: ["storm-64", "atomic", "60"],
            environment: ["STEPBENCH_STORM64_ROUNDS": "2"]
        ).run(mergingOutput: true)
        #expect(capped.status == 0, "\(capped.stdoutText)")
        for bad in ["0", "-1", "many"] {
            let refused = try ChildLaunch(
                executable: Self.executable, arguments: ["storm-64", "atomic", "60"],
                environment: ["STEPBENCH_STORM64_ROUNDS": bad]
            ).run(mergingOutput: true)
            #expect(refused.status == 2 && refused.stdoutText.contains("must be a positive number of rounds"), "\(bad)")
        }
        // the cap is the number of rounds run
        let progress = TortureProgress(label: "cap", measuring: true, roundLimit: 2)
        #expect(TortureCase.storm64.run(.atomic, progress).isEmpty)
        #expect(progress.roundsRun == 2)
    }

    @Test("the child knows exactly the kit's cases")
    func test_torture_caseListMatches() throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: Self.executable.path),
            "build it first: swift build --product SteppingTorture (swift test builds it)")
        let (status, output) = try Self.child(["--list"])
        #expect(status == 0)
        #expect(output.split(separator: "\n").map(String.init) == TortureCase.allCases.map(\.rawValue))
    }
}

@Suite("Torture: a crashed child's cause")
struct CrashCauseTests {
    @Test("a release build's precondition failure is named by the crashed thread's first frames")
    func test_crashCause_readsTheBacktrace() {
        let output = """
            💣 Program crashed: Illegal instruction at 0x0000563729c0b37d

            Thread 0 "stepbench" crashed:

              0 [inlined] [system]      0x0000563729c0b37d Swift runtime failure: precondition failure in stepbench at //<compiler-generated>
              1                         0x0000563729c0b37d AsyncThrowingPublisher.Iterator.Inner.receive(_:) + 685 in stepbench at /x/OpenCombine/Concurrency/GENERATED-Publisher+Concurrency.swift:314:13
              2 [ra] [thunk]            0x0000563729c0bda0 protocol witness for Subscriber.receive(_:) + 15 in stepbench at //<compiler-generated>
            """
        #expect(
            TortureCase.crashCause(output)
                == "Swift runtime failure: precondition failure (<compiler-generated>) ← "
                + "AsyncThrowingPublisher.Iterator.Inner.receive(_:) (GENERATED-Publisher+Concurrency.swift:314:13)")
    }

    @Test("the runtime's message wins; no backtrace and no message: nothing")
    func test_crashCause_messageOrNothing() {
        #expect(
            TortureCase.crashCause("x\nFatal error: boom\nThread 0 crashed:\n 0 0x1 f in a at b.swift:1")
                == "Fatal error: boom")
        #expect(TortureCase.crashCause("Segmentation fault") == nil)
    }
}
