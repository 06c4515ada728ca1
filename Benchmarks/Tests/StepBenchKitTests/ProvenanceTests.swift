import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance
import Testing

@testable import StepBenchKit

/// Honest provenance: a run records the tree it measured as dirty only when measured code
/// changed. What the bench itself writes (results/: `stepbench profile`'s profile-latest.json
/// before `run`, in scripts/bench) does not make it dirty.
@Suite("provenance: what makes a run dirty")
struct ProvenanceTests {

    @Test("reading the toolchain's version leaves nothing in the temporary folder")
    func test_swiftVersion_leavesNoFolderBehind() throws {
        // The Swift driver makes a TemporaryDirectory.XXXXXX (holding .keep-directory) in its
        // TMPDIR on every call and leaves it: every run, profile and child left one in /tmp.
        let folder = temporaryFolder("stepbench-swift-version")
        defer { try? FileManager.default.removeItem(at: folder) }
        let version = MachineFingerprint.swiftVersion(temporary: folder)
        #expect(version?.hasPrefix("Swift version") == true, "\(version ?? "none")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
    }
    /// A git work tree with a source file and a results file committed; `body` runs in it.
    static func withCheckout(_ body: (URL) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("stepbench-provenance-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("results/some-machine"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("Sources"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: root.appendingPathComponent("results/some-machine/profile-latest.json"))
        try Data("let x = 1\n".utf8).write(to: root.appendingPathComponent("Sources/x.swift"))
        for arguments in [
            ["init", "-q"], ["add", "."],
            ["-c", "user.email=test@example.com", "-c", "user.name=test", "commit", "-q", "-m", "initial"],
        ] {
            let result = try ChildLaunch.command("git", ["-C", root.path] + arguments).run()
            try #require(result.status == 0, "git \(arguments.joined(separator: " ")) failed: \(result.stderrText)")
        }
        try body(root)
    }

    @Test func test_dirty_theBenchsOwnOutputsLeaveTheTreeClean() throws {
        try Self.withCheckout { root in
            #expect(!MachineFingerprint.isDirty(directory: root.path))
            try Data("{\"rewritten\": true}".utf8).write(
                to: root.appendingPathComponent("results/some-machine/profile-latest.json"))
            #expect(!MachineFingerprint.isDirty(directory: root.path), "a rewritten results file made the run dirty")
            // From a subfolder, as from the top: results/ is the checkout's own.
            #expect(!MachineFingerprint.isDirty(directory: root.appendingPathComponent("Sources").path))
        }
    }

    @Test func test_dirty_aChangedSourceMakesTheTreeDirty() throws {
        try Self.withCheckout { root in
            try Data("let x = 2\n".utf8).write(to: root.appendingPathComponent("Sources/x.swift"))
            #expect(MachineFingerprint.isDirty(directory: root.path))
            #expect(MachineFingerprint.isDirty(directory: root.appendingPathComponent("results").path))
        }
    }
}
