import Foundation
import Testing

@testable import StepBenchKit

/// Whole profiles (every function, call edge and runtime call of a window pair) and the
/// attribution of a moved count to the functions that moved it.
@Suite("whole profiles and where a count went")
struct CallProfileTests {
    /// A dump part of `events` events of a path where `step` runs 10 instructions of its own per
    /// event and calls `swift_retain` (5 instructions a call) `retains` times per event, and once
    /// per event the Swift function `Array.append(_:)` (3 instructions).
    static func dump(events: Int, retains: Int, stepCost: Int = 10, in folder: URL, name: String) throws
        -> CallgrindDump
    {
        let step = stepCost * events, calls = retains * events, retain = 5 * calls, append = 3 * events
        let text = """
            version: 1
            part: 1
            desc: Trigger: Client Request: stepbench-window sync-more locked \(events)
            positions: instr line
            events: Ir
            summary: \(step + retain + append)
            ob=/bin/tool
            fl=???
            fn=step
            0x10 0 \(step)
            cob=/bin/tool
            cfn=swift_retain
            calls=\(calls) 0x20 0
            0x11 0 \(retain)
            cfn=$sSa6appendyyxnF
            calls=\(events) 0x30 0
            0x12 0 \(append)
            fn=swift_retain
            0x20 0 \(retain)
            fn=$sSa6appendyyxnF
            0x30 0 \(append)
            totals: \(step + retain + append)
            """
        let url = folder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return try CallgrindDump(contentsOf: url)
    }

    static func profile(retains: Int, stepCost: Int = 10) throws -> ResultsFile.CallProfile {
        let folder = temporaryFolder()
        let low = try dump(events: 100, retains: retains, stepCost: stepCost, in: folder, name: "low.1")
        let high = try dump(events: 300, retains: retains, stepCost: stepCost, in: folder, name: "high.1")
        #expect(low.calls[CallEdge(caller: "step", callee: "swift_retain")]?.count == UInt64(100 * retains))
        return .between(low, high, span: 200)
    }

    @Test("every function exclusive and inclusive, the edges, the runtime's calls at their callers; it conserves")
    func test_callProfile_isWholeAndConserves() throws {
        let p = try Self.profile(retains: 2)
        let functions = Dictionary(uniqueKeysWithValues: p.functions.map { ($0.key, $0) })
        #expect(functions["step"]?.exclusivePerEvent == 10)
        #expect(functions["step"]?.inclusivePerEvent == 23)  // 10 + 2 × 5 + 3
        #expect(functions["swift_retain"]?.exclusivePerEvent == 10)
        #expect(functions["Array.append(_:)"]?.exclusivePerEvent == 3, "demangled to its key: \(p.functions)")
        #expect(p.functions.first?.key == "step" || p.functions.first?.key == "swift_retain")
        #expect(p.runtimeCalls == [.init(kind: .retain, callee: "swift_retain", caller: "step", callsPerEvent: 2)])
        #expect(p.edges.contains { $0.caller == "step" && $0.callee == "swift_retain" && $0.callsPerEvent == 2 })
        // conservation: the functions' exclusive counts and the unattributed rest are the total
        let listed = p.functions.reduce(0) { $0 + $1.exclusivePerEvent }
        #expect(abs(listed + p.unattributedPerEvent - 23) < 1e-9)
        #expect(abs(p.unattributedPerEvent) < 1e-9)
    }

    @Test("runtime calls are told by the symbol called")
    func test_runtimeKind_bySymbol() {
        typealias Kind = ResultsFile.CallProfile.RuntimeKind
        #expect(Kind(symbol: "swift_retain") == .retain)
        #expect(Kind(symbol: "swift_unknownObjectRelease") == .release)
        #expect(Kind(symbol: "swift_allocObject") == .allocation)
        #expect(Kind(symbol: "free") == .deallocation)
        #expect(Kind(symbol: "swift_beginAccess") == .exclusivity)
        #expect(Kind(symbol: "swift_getGenericMetadata") == .metadata)
        #expect(Kind(symbol: "$s8Stepping6LockedCMa") == .metadata)  // a type metadata accessor
        #expect(Kind(symbol: "swift_dynamicCastClass") == .cast)
        #expect(Kind(symbol: "pthread_mutex_lock") == .lock)
        #expect(Kind(symbol: "$s8Stepping6LockedC7receiveyyF") == nil)
        #expect(Kind(symbol: "memcpy") == nil)
    }

    @Test("a key survives a rebuild: specialisation, merging and closure numbers folded")
    func test_demangler_keyFolds() {
        #expect(Demangler.key("specialized Locked.receive(_:)") == "Locked.receive(_:)")
        #expect(Demangler.key("merged closure #3 in Locked.receive(_:)") == "closure in Locked.receive(_:)")
        #expect(Demangler.key("partial apply for closure #1 in f()") == "closure in f()")
        #expect(Demangler.key("swift_release'2") == "swift_release")
    }

    @Test("an added retain per event: the attribution ranks swift_retain first, called more often, with all of the Δ")
    func test_attribution_ranksTheFunctionThatMoved() throws {
        let (a, b) = (try Self.profile(retains: 2), try Self.profile(retains: 3))
        let moved = try #require(Comparison.attribution("sync-more", "locked", 23, 28, a, b))
        #expect(moved.functions.first?.key == "swift_retain")
        #expect(moved.functions.first?.exclusive == 5)
        #expect(moved.functions.first?.share == 1)
        #expect(moved.functions.first?.cause == .calledMoreOften)
        #expect(abs(moved.remainder) < 1e-9)
        #expect(
            moved.edges.first.map { ($0.caller, $0.callee, $0.callsBefore, $0.callsAfter) }! == (
                "step", "swift_retain", 2, 3
            ))
        #expect(moved.runtimeCalls.first?.kind == .retain)
        // a function's own code: called as often, more instructions a call
        let slower = try #require(
            Comparison.attribution("sync-more", "locked", 23, 27, a, try Self.profile(retains: 2, stepCost: 14)))
        #expect(slower.functions.map(\.key) == ["step"])
        #expect(slower.functions.first?.cause == .costPerCall)
        #expect(slower.edges.isEmpty && slower.runtimeCalls.isEmpty)
    }

    @Test("two profiles of one build: no function moved, and compare says so")
    func test_attribution_sameProfileMovesNothing() throws {
        let a = try Self.profile(retains: 2)
        #expect(Comparison.attribution("sync-more", "locked", 23, 23, a, a) == nil)
        let comparison = Comparison(
            baselineCommit: "a", currentCommit: "a", minEffect: 0.05, decisionLevel: 0.99, noiseProfile: nil,
            rows: [], attributions: [])
        #expect(try comparison.render(.text).contains("where it went: no function moved"))
        let none = Comparison(
            baselineCommit: "a", currentCommit: "a", minEffect: 0.05, decisionLevel: 0.99, noiseProfile: nil, rows: [])
        #expect(try !none.render(.text).contains("where it went"), "files without whole profiles: nothing said")
    }

    @Test("a profile file keeps its whole call profiles beside it, compressed, and reads them back")
    func test_callProfiles_besideTheFileAndBack() throws {
        let whole = try Self.profile(retains: 2)
        var row = PathTests.row(.syncMore, design: "locked", instructions: 23)
        row.callProfile = whole
        var other = PathTests.row(.stalePromise, design: "locked", instructions: 5)
        other.callProfile = nil
        let file = PathTests.file([row, other])
        let url = temporaryFolder().appendingPathComponent("profile-x.json")
        try file.write(to: url)
        let beside = url.deletingLastPathComponent().appendingPathComponent("profile-x.calls.json.gz")
        #expect(FileManager.default.fileExists(atPath: beside.path))
        let main = try String(contentsOf: url, encoding: .utf8)
        #expect(!main.contains("callProfile"), "the results file itself stays small")
        let back = try ResultsFile.read(url)
        #expect(back.paths?.first { $0.path == .syncMore }?.callProfile == whole)
        #expect(back.paths?.first { $0.path == .stalePromise }?.callProfile == nil)
        // the same profile writes the same bytes (a timestamped file and latest.json are one blob)
        let again = url.deletingLastPathComponent().appendingPathComponent("profile-y.json")
        try file.write(to: again)
        #expect(
            try Data(contentsOf: beside)
                == Data(contentsOf: again.deletingLastPathComponent().appendingPathComponent("profile-y.calls.json.gz"))
        )
        // a damaged companion is an error naming it, not a silent profile without its calls
        try Data("not gzip".utf8).write(to: beside)
        #expect { try ResultsFile.read(url) } throws: { "\($0)".contains("profile-x.calls.json.gz") }
    }
}
