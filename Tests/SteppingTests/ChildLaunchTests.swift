import Foundation
@_spi(StepBench) import SteppingConformance
import Testing

/// How the kit and the bench start a child (``ChildLaunch``): a child cannot take this process
/// down, and one that runs too long is stopped.
@Suite("ChildLaunch: a child cannot take its parent down")
struct ChildLaunchTests {
    @Test("a child that exits without reading a 1 MiB request leaves the parent running, and says so")
    func test_requestNotRead() throws {
        // Before: the write met a closed pipe and SIGPIPE killed this process (exit 141, no message).
        let outcome = try ChildLaunch(executable: URL(fileURLWithPath: "/bin/true"), arguments: []).run(
            input: Data(repeating: 0x2A, count: 1 << 20))
        #expect(outcome.succeeded)
        #expect(outcome.inputRefused)
    }

    @Test("a child that reads its request gets all of it")
    func test_requestRead() throws {
        let outcome = try ChildLaunch(executable: URL(fileURLWithPath: "/usr/bin/wc"), arguments: ["-c"]).run(
            input: Data(repeating: 0x2A, count: 1 << 20))
        #expect(outcome.succeeded && !outcome.inputRefused)
        #expect(outcome.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "1048576")
    }

    @Test("a child that ends within its time limit is not called timed out")
    func test_withinTimeLimit() throws {
        let outcome = try ChildLaunch.command("true", []).run(timeLimit: 30)
        #expect(outcome.succeeded && !outcome.timedOut)
    }

    @Test("a child past its time limit is killed with the pipeline it started, and the outcome says so")
    func test_timeLimitTakesTheGroup() throws {
        // bash's own child keeps the output open: only the group's end closes it
        let started = Date()
        let outcome = try ChildLaunch.command("bash", ["-c", "sleep 60 | cat"]).run(timeLimit: 1)
        #expect(outcome.timedOut)
        #expect(Date().timeIntervalSince(started) < 30)
    }

    @Test("a child past its time limit is killed, and the outcome says so")
    func test_timeLimit() throws {
        let started = Date()
        let outcome = try ChildLaunch.command("sleep", ["60"]).run(timeLimit: 1)
        #expect(outcome.timedOut && !outcome.succeeded)
        #expect(Date().timeIntervalSince(started) < 30)
    }
}
