import Foundation
import StepBenchKit
@_spi(StepBench) import SteppingConformance
import Testing

// The bench's own test helpers (the library's and the kit's tests have theirs in the root
// package's Tests/TestSupport, which a package of its own cannot import).

/// Writes `text` as an executable script at `url`. A child process (`install`) writes the file,
/// never this one: the test process starts children from many threads at once, and a child
/// started while this process held the file open for writing keeps it open until it execs, so
/// that starting the script fails with "Text file busy" (ETXTBSY; seen once in a fresh-clone
/// `scripts/test`, in GateTests).
func writeExecutable(_ text: String, to url: URL) throws {
    let source = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).source")
    defer { try? FileManager.default.removeItem(at: source) }
    try Data(text.utf8).write(to: source)
    let done = try ChildLaunch.command("install", ["-m", "755", source.path, url.path]).run()
    guard done.status == 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, "install": done.stderrText])
    }
}

/// A new, empty folder under the temporary directory.
func temporaryFolder(_ prefix: String = "stepbench-tests") -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The environment variable that steers the bench's tests (the library's tests have theirs).
enum TestSwitches {
    /// `STEPBENCH_ALLOCATION_TESTS=1`: run the allocation-counter tests, whose counts are
    /// process-wide (scripts/test runs them alone, in a process of their own); unset or 0: skip.
    static var allocationTests: Bool {
        switch ProcessInfo.processInfo.environment["STEPBENCH_ALLOCATION_TESTS"] {
        case nil, "0": false
        case "1": true
        case let other?: preconditionFailure("STEPBENCH_ALLOCATION_TESTS=\(other): expected 1 (run them) or 0")
        }
    }
}

/// Expects `body` to fail with a ``ResultsError`` of `kind`; returns the error (nil when it did
/// not fail so), for a look at its message. Tests tell failures apart by kind, not by message.
@discardableResult
func expectFailure<R>(
    _ kind: ResultsError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) -> ResultsError? {
    let error = #expect(throws: ResultsError.self, sourceLocation: sourceLocation) { _ = try body() }
    if let error { #expect(error.kind == kind, "\(error.kind): \(error)", sourceLocation: sourceLocation) }
    return error
}
