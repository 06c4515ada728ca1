import Foundation
import Testing

@testable import StepBenchKit

/// The first lines of a callgrind dump part of the window `label` that counted `summary`
/// instructions, in one object, `/bin/tool`.
private func dumpHeader(_ label: String, summary: Int) -> String {
    """
    version: 1
    part: 1
    desc: Trigger: Client Request: stepbench-window \(label)
    positions: instr line
    events: Ir
    summary: \(summary)
    ob=/bin/tool
    fl=???
    """
}

/// A callgrind dump part written as `text` to `folder/name`, read back.
private func writtenDump(_ text: String, in folder: URL, name: String) throws -> CallgrindDump {
    let url = folder.appendingPathComponent(name)
    try text.write(to: url, atomically: true, encoding: .utf8)
    return try CallgrindDump(contentsOf: url)
}

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
            \(dumpHeader("sync-more locked \(events)", summary: step + retain + append))
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
        return try writtenDump(text, in: folder, name: name)
    }

    /// A whole profile from (key, exclusive, inclusive) functions and (caller, callee, calls,
    /// inclusive) edges, per event.
    static func profile(
        _ functions: [(String, Double, Double)], _ edges: [(String, String, Double, Double)]
    ) -> ResultsFile.CallProfile {
        ResultsFile.CallProfile(
            functions: functions.map { .init(key: $0.0, exclusivePerEvent: $0.1, inclusivePerEvent: $0.2) },
            edges: edges.map { .init(caller: $0.0, callee: $0.1, callsPerEvent: $0.2, inclusivePerEvent: $0.3) },
            runtimeCalls: [], unattributedPerEvent: 0)
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
        #expect(Demangler.key("0x00000000004d34d0") == Demangler.unnamed, "an address moves with the layout")
        #expect(Demangler.key("closure in f()") == "closure in f()", "a key is its own key")
    }

    @Test("an added retain per event: charged to the function that makes the call, with all of the Δ")
    func test_attribution_ranksTheFunctionThatMoved() throws {
        let (a, b) = (try Self.profile(retains: 2), try Self.profile(retains: 3))
        let moved = try #require(Comparison.attribution("sync-more", "locked", 23, 28, a, b))
        // swift_retain's own instructions moved (+5), but it was only called once more, each call
        // costing what it did: the Δ is step's, which calls it once more
        #expect(moved.functions.first?.key == "step")
        #expect(moved.functions.first?.charged == 5)
        #expect(moved.functions.first?.exclusive == 0)
        #expect(moved.functions.first?.share == 1)
        #expect(moved.functions.first?.cause == .itsCalls)
        #expect(moved.functions.count == 1, "step explains all of the Δ: \(moved.functions)")
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

    /// A dump part where `step` (4 instructions a call) calls `helper` `helpers` times per event,
    /// and `helper` (6 instructions a call) calls `swift_retain` (5 a call) once per call.
    static func chain(events: Int, helpers: Int, in folder: URL, name: String) throws -> CallgrindDump {
        let calls = helpers * events, step = 4 * events, helper = 6 * calls, retain = 5 * calls
        let text = """
            \(dumpHeader("sync-more locked \(events)", summary: step + helper + retain))
            fn=step
            0x10 0 \(step)
            cfn=helper
            calls=\(calls) 0x20 0
            0x11 0 \(helper + retain)
            fn=helper
            0x20 0 \(helper)
            cfn=swift_retain
            calls=\(calls) 0x30 0
            0x21 0 \(retain)
            fn=swift_retain
            0x30 0 \(retain)
            totals: \(step + helper + retain)
            """
        return try writtenDump(text, in: folder, name: name)
    }

    @Test(
        "a helper called twice as often: its Δ and its callees' are charged to the caller that calls it more; all charges sum to the Δ"
    )
    func test_attribution_chargesTheCallerOfAHelperCalledMoreOften() throws {
        func profile(_ helpers: Int) throws -> ResultsFile.CallProfile {
            let folder = temporaryFolder()
            return .between(
                try Self.chain(events: 100, helpers: helpers, in: folder, name: "low.1"),
                try Self.chain(events: 300, helpers: helpers, in: folder, name: "high.1"), span: 200)
        }
        let moved = try #require(Comparison.attribution("sync-more", "locked", 15, 26, try profile(1), try profile(2)))
        let first = try #require(moved.functions.first)
        #expect(first.key == "step" && first.cause == .itsCalls)
        #expect(abs(first.charged - 11) < 1e-9, "helper's 6 and swift_retain's 5: \(moved.functions)")
        #expect(abs(first.share - 1) < 1e-9 && abs(moved.remainder) < 1e-9)
        // conservation: what each function is charged sums to their Δexclusive (11), whatever the chain
        let (outward, inward) = Comparison.chargedCalls(try profile(1).edges, try profile(2).edges)
        #expect(abs(outward.values.reduce(0, +) - inward.values.reduce(0, +)) < 1e-9)
        // helper: its own +6 and its call's +5 in, the +11 of step's calls into it out: charged 0
        #expect(abs(6 + (outward["helper"] ?? 0) - (inward["helper"] ?? 0)) < 1e-9, "helper passes its Δ on")
    }

    @Test(
        "a differential flame graph: frames by call path, widths of the current build, red where a frame's own count grew"
    )
    func test_flameGraph_fromTheCallEdges() throws {
        func profile(_ helpers: Int) throws -> ResultsFile.CallProfile {
            let folder = temporaryFolder()
            return .between(
                try Self.chain(events: 100, helpers: helpers, in: folder, name: "low.1"),
                try Self.chain(events: 300, helpers: helpers, in: folder, name: "high.1"), span: 200)
        }
        let graph = FlameGraph(title: "sync-more locked", before: try profile(1), after: try profile(2))
        #expect(graph.frames.map(\.path) == [["step"], ["step", "helper"], ["step", "helper", "swift_retain"]])
        #expect(graph.totalBefore == 15 && graph.totalAfter == 26)
        let retain = try #require(graph.frames.last)
        #expect(retain.before == 5 && retain.after == 10 && retain.selfAfter - retain.selfBefore == 5)
        #expect(graph.frames[0].selfAfter == 4 && graph.frames[0].selfBefore == 4, "step's own count did not move")
        let svg = graph.svg()
        #expect(svg.hasPrefix("<svg") && svg.contains("</svg>"))
        #expect(svg.components(separatedBy: "<rect").count - 1 == 4, "a background and three frames")
        #expect(svg.contains("fill=\"rgb(222,222,222)\""), "step: unchanged, grey")
        #expect(svg.contains("fill=\"rgb(235,0,0)\""), "helper's own +6, the largest move: full red")
        // keys are escaped (generic types carry angle brackets)
        #expect(FlameGraph.escape("Box<Int> & more") == "Box&lt;Int&gt; &amp; more")
        #expect(
            FlameGraph.fileName(target: "sync-more", design: "relayed-atomic") == "flame-sync-more_relayed-atomic.svg")
    }

    @Test("a flame graph follows a folded cycle (callgrind's (below main) copies) without halving the program's frames")
    func test_flameGraph_aFoldedCycleIsNotAFrame() {
        // root → (below main) → libc → (below main) → main: one key for both copies of (below main)
        let profile = Self.profile(
            [("root", 0, 100), ("(below main)", 0, 200), ("libc", 0, 100), ("main", 100, 100)],
            [
                ("root", "(below main)", 0, 100), ("(below main)", "libc", 0, 100), ("libc", "(below main)", 0, 100),
                ("(below main)", "main", 0, 100),
            ])
        let graph = FlameGraph(title: "t", before: profile, after: profile)
        let main = graph.frames.first { $0.key == "main" }
        #expect(main?.path == ["root", "(below main)", "main"] && main?.after == 100, "\(graph.frames)")
        #expect(graph.totalAfter == 100)
    }

    @Test(
        "an edge priced from neither side (calls per event at or below zero, or gone) is not charged, and nothing traps"
    )
    func test_chargedCalls_anEdgeWithoutACallPerEventIsSkipped() {
        typealias Edge = ResultsFile.CallProfile.Edge
        // a per-subscription call seen per event as the two windows' difference: -0.5 before, absent after
        let before = [Edge(caller: "subscribe", callee: "malloc", callsPerEvent: -0.5, inclusivePerEvent: -20)]
        let (outward, inward) = Comparison.chargedCalls(before, [])
        #expect(outward.isEmpty && inward.isEmpty)
        // zero calls before, a real call after: priced from the current profile
        let zero = [Edge(caller: "a", callee: "b", callsPerEvent: 0, inclusivePerEvent: 0)]
        let now = [Edge(caller: "a", callee: "b", callsPerEvent: 2, inclusivePerEvent: 10)]
        #expect(Comparison.chargedCalls(zero, now).outward == ["a": 10])
    }

    @Test(
        "code without a symbol moved to another address is not a move: keys folded again on comparison, counts merged")
    func test_attribution_anAddressThatMovedIsNotAFunctionThatMoved() throws {
        func profile(at address: String) -> ResultsFile.CallProfile {
            Self.profile([("step", 10, 18), (address, 8, 8)], [("step", address, 1, 8)])
        }
        let (a, b) = (profile(at: "0x00000000004d34d0"), profile(at: "0x00000000004d34e0"))
        #expect(Comparison.attribution("x", "d", 18, 18, a, b) != nil, "as written, the address keys differ")
        #expect(Comparison.attribution("x", "d", 18, 18, a.rekeyed(Demangler.key), b.rekeyed(Demangler.key)) == nil)
        let merged = Self.profile([("0x1", 1, 1), ("0x2", 2, 2)], []).rekeyed(Demangler.key)
        #expect(merged.functions.map(\.key) == [Demangler.unnamed] && merged.functions.first?.exclusivePerEvent == 3)
    }

    @Test(
        "one more call of an edge that sometimes deallocates is priced at what the edge's cost moved, not at its average call"
    )
    func test_chargedCalls_aCallIsPricedAtMostAtWhatItsEdgeMoved() {
        typealias Edge = ResultsFile.CallProfile.Edge
        // three releases per event, one of them the last (its deinit behind it): 300 in all; a
        // fourth, plain release adds 18
        let before = [Edge(caller: "receive", callee: "swift_release", callsPerEvent: 3, inclusivePerEvent: 300)]
        let after = [Edge(caller: "receive", callee: "swift_release", callsPerEvent: 4, inclusivePerEvent: 318)]
        let (outward, inward) = Comparison.chargedCalls(before, after)
        #expect(outward == ["receive": 18] && inward == ["swift_release": 18])
        // more calls while the edge's cost fell: nothing charged through it
        let cheaper = [Edge(caller: "receive", callee: "swift_release", callsPerEvent: 4, inclusivePerEvent: 290)]
        #expect(Comparison.chargedCalls(before, cheaper).outward.isEmpty)
    }

    @Test("a flame graph whose every function is called by another starts at the outermost that holds the whole count")
    func test_flameGraph_withoutAnUncalledFunction() {
        // (below main) ↔ run: folded keys call each other; run holds the whole 10 and calls work
        let profile = Self.profile(
            [("(below main)", 0, 20), ("run", 2, 10), ("work", 8, 8)],
            [("(below main)", "run", 0, 10), ("run", "(below main)", 0, 10), ("run", "work", 1, 8)])
        let graph = FlameGraph(title: "t", before: profile, after: profile)
        #expect(graph.frames.map(\.path) == [["run"], ["run", "work"]], "\(graph.frames)")
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

/// The machine-code hash of a function (``MachineCode``) and what it tells a comparison.
@Suite("machine code: changed, or only moved")
struct MachineCodeTests {
    /// llvm-objdump's disassembly of `f` laid out at `base`: a call to `swift_retain`, a jump
    /// inside `f`, a `%rip`-relative load of a symbol and one into a jump table, then padding.
    static func disassembly(base: Int, extraRetain: Bool = false, padding: Int = 1) -> String {
        func hex(_ x: Int) -> String { "0x" + String(x, radix: 16) }
        var lines = [
            "", "stepbench:\tfile format elf64-x86-64", "", "Disassembly of section .text:", "", "<$s1f>:",
            "               \tpushq\t%rbp",
            "               \tmovq\t\(hex(0x2000 + base))(%rip), %rax    # \(hex(0x9000 + base)) <$s4dataMa>",
            "               \tleaq\t-\(hex(0x40 + base))(%rip), %rcx    # \(hex(0x7000 + base)) <$s5otherMf+0x44>",
            "               \tcallq\t\(hex(0x100 + base)) <swift_retain@plt>",
        ]
        if extraRetain { lines.append("               \tcallq\t\(hex(0x100 + base)) <swift_retain@plt>") }
        lines += [
            "               \tjne\t\(hex(0x500 + base)) <$s1f+0x3b>",
            "               \tpopq\t%rbp",
            "               \tretq",
        ]
        lines += Array(repeating: "               \tnopw\t%cs:(%rax,%rax)", count: padding)
        lines += ["", "<$s1g>:", "               \tretq", ""]
        return lines.joined(separator: "\n")
    }

    static func hash(_ text: String, _ symbol: String = "$s1f") throws -> String {
        let lines = try #require(MachineCode.functionsOf(disassembly: text).first { $0.symbol == symbol }?.lines)
        return MachineCode.hash(MachineCode.normalised(lines, symbol: symbol))
    }

    @Test("the same code elsewhere in the binary hashes alike; an added call does not")
    func test_machineCode_layoutIsNotCode() throws {
        let here = try Self.hash(Self.disassembly(base: 0))
        #expect(try Self.hash(Self.disassembly(base: 0x1230, padding: 3)) == here, "moved, padded otherwise")
        #expect(try Self.hash(Self.disassembly(base: 0, extraRetain: true)) != here, "one more retain")
        #expect(try Self.hash(Self.disassembly(base: 0), "$s1g") != here)
        let f = try #require(MachineCode.functionsOf(disassembly: Self.disassembly(base: 0)).first)
        #expect(
            MachineCode.normalised(f.lines, symbol: "$s1f") == [
                "pushq %rbp", "movq (%rip), %rax # <$s4dataMa>", "leaq (%rip), %rcx", "callq <swift_retain@plt>",
                "jne <+0x3b>", "popq %rbp", "retq",
            ])
    }

    @Test("a function that ran in several objects is looked up in each of them, whatever the order")
    func test_machineCode_everyObjectOfAName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // a module's local helper, as Swift emits one per module: in the executable and in a library
        let text = """
            version: 1
            part: 1
            positions: instr line
            events: Ir
            summary: 12
            ob=/bin/tool
            fl=???
            fn=helper
            0x10 0 4
            fn=step'2
            0x20 0 2
            ob=/lib/libx.so
            fl=???
            fn=helper
            0x90 0 4
            fn=other
            0x99 0 2
            totals: 12
            """
        let url = folder.appendingPathComponent("part.1")
        try text.write(to: url, atomically: true, encoding: .utf8)
        let objects = MachineCode.objects(of: [try CallgrindDump(contentsOf: url)])
        #expect(objects["helper"] == ["/bin/tool", "/lib/libx.so"])
        #expect(objects["step'2"] == ["/bin/tool"] && objects["other"] == ["/lib/libx.so"])
    }

    @Test("only plain symbols are looked up; callgrind's cycle mark is dropped")
    func test_machineCode_symbols() {
        #expect(MachineCode.symbol(of: "$s8Stepping1fyyF'2") == "$s8Stepping1fyyF")
        #expect(MachineCode.symbol(of: "pthread_mutex_lock@@GLIBC_2.2.5") == "pthread_mutex_lock@@GLIBC_2.2.5")
        #expect(
            MachineCode.symbol(of: "swift::MetadataCacheKey::operator==(swift::MetadataCacheKey const&) const") == nil)
        #expect(MachineCode.symbol(of: "0x00000000004d34d0") == nil)
        #expect(MachineCode.combined(["a"]) == "a")
        #expect(MachineCode.combined(["a", nil]) == nil)
        #expect(MachineCode.combined(["a", "b"]) == MachineCode.combined(["b", "a"]))
    }

    /// `step` calling `swift_retain` `retains` times per event, with the given code hashes.
    static func profile(retains: Double, step: String?, retain: String? = "r") -> ResultsFile.CallProfile {
        var p = CallProfileTests.profile(
            [("step", 10, 10 + 5 * retains), ("swift_retain", 5 * retains, 5 * retains)],
            [("step", "swift_retain", retains, 5 * retains)])
        p.functions[0].code = step
        p.functions[1].code = retain
        return p
    }

    @Test("a row tells code changed, calls changed, layout only, or that it cannot tell")
    func test_attribution_tellsWhatChanged() throws {
        let a = Self.profile(retains: 2, step: "s1")
        let code = try #require(Comparison.attribution("p", "d", 20, 25, a, Self.profile(retains: 3, step: "s2")))
        #expect(code.change == .code && code.codeChanged == ["step"])
        #expect(code.functions.first?.codeChanged == true)
        let calls = try #require(Comparison.attribution("p", "d", 20, 25, a, Self.profile(retains: 3, step: "s1")))
        #expect(calls.change == .calls && calls.codeChanged == [])
        #expect(calls.functions.first?.codeChanged == false)
        // the count moved by two instructions, no function's code and no call did
        var moved = Self.profile(retains: 2, step: "s1")
        moved.functions[0].exclusivePerEvent += 2
        let layout = try #require(Comparison.attribution("p", "d", 20, 22, a, moved))
        #expect(layout.change == .layout)
        let old = Self.profile(retains: 2, step: nil, retain: nil)
        #expect(try #require(Comparison.attribution("p", "d", 20, 22, old, moved)).change == .unknown)
        let text = try Comparison(
            baselineCommit: "a", currentCommit: "b", minEffect: 0.05, decisionLevel: 0.99, noiseProfile: nil,
            rows: [], attributions: [code, layout]
        ).render(.text)
        #expect(text.contains("code changed in 1 function: step"), "\(text)")
        #expect(text.contains("layout only (no function's code or calls changed)"), "\(text)")
        #expect(text.contains("its calls changed; code changed)"), "\(text)")
    }

    /// `receive` allocating one object per event more, which `deinit`'s release frees; with
    /// `freeing: false`, the object lives on (no destructor runs).
    static func allocating(_ allocates: Bool, freeing: Bool = true, freer: String = "deinit") -> ResultsFile.CallProfile
    {
        let n = allocates ? 1.0 : 0, f = allocates && freeing ? 1.0 : 0
        var p = CallProfileTests.profile(
            [
                ("receive", 10 + 2 * n, 10 + 32 * n), ("swift_allocObject", 30 * n, 30 * n),
                (freer, 10, 10 + 60 * f), ("swift_release", 5 * f, 60 * f), ("_swift_release_dealloc", 5 * f, 55 * f),
                ("Storage.deinit", 20 * f, 50 * f), ("swift_deallocClassInstance", 30 * f, 30 * f),
            ],
            [
                ("receive", "swift_allocObject", n, 30 * n), (freer, "swift_release", f, 60 * f),
                ("swift_release", "_swift_release_dealloc", f, 55 * f),
                ("_swift_release_dealloc", "Storage.deinit", f, 50 * f),
                ("Storage.deinit", "swift_deallocClassInstance", f, 30 * f),
            ])
        // one entry a function (the freer may be receive itself)
        p.functions = Dictionary(grouping: p.functions.filter { $0.inclusivePerEvent > 0 }, by: \.key).map {
            .init(
                key: $0.key, exclusivePerEvent: $0.value.reduce(0) { $0 + $1.exclusivePerEvent },
                inclusivePerEvent: $0.value.reduce(0) { $0 + $1.inclusivePerEvent })
        }
        p.edges = p.edges.filter { $0.callsPerEvent > 0 }
        p.runtimeCalls = [
            .init(kind: .allocation, callee: "swift_allocObject", caller: "receive", callsPerEvent: n),
            .init(kind: .release, callee: "swift_release", caller: freer, callsPerEvent: f),
            .init(
                kind: .deallocation, callee: "swift_deallocClassInstance", caller: "Storage.deinit", callsPerEvent: f),
        ].filter { $0.callsPerEvent > 0 }
        return p
    }

    @Test("the freeing of what a function now allocates is charged to it, not to the release that frees it")
    func test_attribution_chargesTheFreeingToTheAllocation() throws {
        let before = Self.allocating(false), after = Self.allocating(true)
        let a = try #require(Comparison.attribution("p", "d", 20, 112, before, after))
        // receive: 2 of its own and the 30 of swift_allocObject; the deinit's release (5 of its
        // own, 5 of _swift_release_dealloc's) and the destructor it runs (50): all receive's
        let first = try #require(a.functions.first)
        #expect(first.key == "receive" && abs(first.charged - 92) < 1e-9, "\(a.functions)")
        #expect(first.freedIn == ["deinit"], "\(first)")
        #expect(!a.functions.contains { $0.key == "deinit" && abs($0.charged) >= 0.01 }, "\(a.functions)")
        #expect(abs(a.functions.reduce(0) { $0 + $1.charged } + a.remainder - 92) < 1e-9)
        let text = try Comparison(
            baselineCommit: "a", currentCommit: "b", minEffect: 0.05, decisionLevel: 0.99, noiseProfile: nil,
            rows: [], attributions: [a]
        ).render(.text)
        #expect(text.contains("with the freeing of what it allocates, in deinit"), "\(text)")
        // the other way round: the allocation taken out, its freeing goes with it
        let back = try #require(Comparison.attribution("p", "d", 112, 20, after, before))
        #expect(back.functions.first?.key == "receive" && abs((back.functions.first?.charged ?? 0) + 92) < 1e-9)
    }

    @Test("an allocation nobody frees per event, or freed where it is made, moves no charge")
    func test_attribution_movesNoFreeingWithoutOne() throws {
        let lives = try #require(
            Comparison.attribution("p", "d", 20, 52, Self.allocating(false), Self.allocating(true, freeing: false)))
        #expect(lives.functions.map(\.key) == ["receive"] && lives.functions[0].freedIn == nil, "\(lives.functions)")
        // receive frees what it allocates: nothing to move, its charge is its own already
        let own = try #require(
            Comparison.attribution(
                "p", "d", 20, 112, Self.allocating(false, freer: "receive"), Self.allocating(true, freer: "receive")))
        #expect(own.functions.first?.key == "receive" && abs((own.functions.first?.charged ?? 0) - 92) < 1e-9)
        #expect(own.functions.first?.freedIn == nil, "\(own.functions)")
    }
}

/// A change made in a helper inlined into several functions: charged to the helper, not spread
/// over its callers (the debug information's inline chains, ``InlinedFrames``).
@Suite("inlined helpers")
struct InlinedHelperTests {
    /// A dump part where `receive` and `complete` each run 10 instructions of their own and a
    /// copy of `update`'s 4 (one instruction a run, at 0x41–0x44 in receive, 0x51–0x54 in
    /// complete) that calls `swift_retain` (5 instructions) `retains` times per run (call sites
    /// 0x45 and 0x55); with `copies: 2`, receive holds a second copy (0x46–0x49, call site 0x4a).
    static func dump(events: Int, retains: Int, copies: Int = 1, in folder: URL, name: String) throws
        -> CallgrindDump
    {
        let calls = retains * events, retain = 5 * calls
        func copy(at first: Int) -> String {
            (0..<4).map { "0x\(String(first + $0, radix: 16)) 0 \(events)" }.joined(separator: "\n") + """

                cfn=swift_retain
                calls=\(calls) 0x20 0
                0x\(String(first + 4, radix: 16)) 0 \(retain)
                """
        }
        let receive = 10 * events + copies * (4 * events + retain), complete = 10 * events + 4 * events + retain
        let text = """
            \(dumpHeader("sync-more atomic \(events)", summary: receive + complete))
            fn=receive
            0x40 0 \(10 * events)
            \(copy(at: 0x41))
            \(copies == 2 ? copy(at: 0x46) : "")
            fn=complete
            0x50 0 \(10 * events)
            \(copy(at: 0x51))
            fn=swift_retain
            0x20 0 \((copies + 1) * retain)
            totals: \(receive + complete)
            """
        return try writtenDump(text, in: folder, name: name)
    }

    /// Each copy's addresses, its instructions and its call site.
    static let helpers: [String: [UInt64: InlinedFrames.Site]] = {
        var sites: [UInt64: InlinedFrames.Site] = [:]
        for (first, copy) in [(0x41, "receive 1"), (0x46, "receive 2"), (0x51, "complete 1")] {
            for address in first..<first + 5 { sites[UInt64(address)] = .init(helper: "update()", instance: copy) }
        }
        return ["/bin/tool": sites]
    }()

    static func profile(
        retains: Int, copies: Int = 1, helpers: [String: [UInt64: InlinedFrames.Site]]? = Self.helpers
    ) throws -> ResultsFile.CallProfile {
        let folder = temporaryFolder()
        return .between(
            try dump(events: 100, retains: retains, copies: copies, in: folder, name: "low.1"),
            try dump(events: 300, retains: retains, copies: copies, in: folder, name: "high.1"), span: 200,
            helpers: helpers)
    }

    @Test("a dump keeps each call's site: the address of the call instruction in its object")
    func test_callgrindDump_keepsCallSites() throws {
        let dump = try Self.dump(events: 100, retains: 1, in: temporaryFolder(), name: "d.1")
        let site = CallgrindDump.CallSite(
            object: "/bin/tool", address: 0x45, edge: CallEdge(caller: "receive", callee: "swift_retain"))
        #expect(dump.callSites[site]?.count == 100)
        #expect(dump.callSites[site]?.inclusive == 500)
        #expect(dump.callSites.count == 2)
    }

    @Test("a profile keeps each helper's part of the functions it was inlined into")
    func test_profile_keepsInlinedParts() throws {
        let p = try Self.profile(retains: 1)
        let parts = try #require(p.inlined)
        #expect(parts.map(\.into).sorted() == ["complete", "receive"])
        #expect(parts.allSatisfy { $0.helper == "update()" && $0.exclusivePerEvent == 4 && $0.runsPerEvent == 1 })
        #expect(
            parts.allSatisfy { $0.calls == [.init(callee: "swift_retain", callsPerEvent: 1, inclusivePerEvent: 5)] })
        #expect(try Self.profile(retains: 1, helpers: nil).inlined == nil, "not looked up: not known")
        // a part whose call site is all that is known of it (no instruction of it placed)
        let sitesOnly = ["/bin/tool": [UInt64(0x45): InlinedFrames.Site(helper: "update()", instance: "receive 1")]]
        let calls = try #require(try Self.profile(retains: 1, helpers: sitesOnly).inlined)
        #expect(calls.map(\.exclusivePerEvent) == [0] && calls.map(\.calls.count) == [1])
        let twice = try #require(try Self.profile(retains: 1, copies: 2).inlined)
        #expect(twice.first { $0.into == "receive" }?.runsPerEvent == 2, "two copies, each run once an event")
    }

    @Test(
        "a retain added in a helper inlined into two callers: the helper charged all of it, the callers nothing; the charges still sum to the Δ"
    )
    func test_attribution_chargesTheInlinedHelper() throws {
        let (a, b) = (try Self.profile(retains: 1), try Self.profile(retains: 2))
        let moved = try #require(Comparison.attribution("sync-more", "atomic", 38, 48, a, b))
        let first = try #require(moved.functions.first)
        #expect(first.key == "update()", "\(moved.functions)")
        #expect(abs(first.share - 1) < 1e-9)
        #expect(first.inlinedInto == ["complete", "receive"])
        #expect(first.cause == .itsCalls)
        #expect(abs(moved.remainder) < 1e-9)
        // without the inline chains, the same Δ is split between the two callers
        let (c, d) = (try Self.profile(retains: 1, helpers: nil), try Self.profile(retains: 2, helpers: nil))
        let split = try #require(Comparison.attribution("sync-more", "atomic", 38, 48, c, d))
        #expect(split.functions.map(\.share) == [0.5, 0.5], "\(split.functions)")
        #expect(split.functions.allSatisfy { $0.inlinedInto == nil })
        // in the text, the helper says where it was inlined
        let text = Comparison.attributionText([moved])
        #expect(
            text.contains(
                "update() (exclusive +0.00, inclusive +10.00; its calls changed; inlined into complete, receive)"),
            "\(text)")
    }

    @Test("a helper inlined once more into a caller is the caller's change, as a call made more often is")
    func test_attribution_aHelperRunMoreOftenIsItsCallers() throws {
        let (a, b) = (try Self.profile(retains: 1), try Self.profile(retains: 1, copies: 2))
        // receive: 10 + 2 × (4 + 5); complete: 10 + 4 + 5
        let moved = try #require(Comparison.attribution("sync-more", "atomic", 38, 47, a, b))
        let first = try #require(moved.functions.first)
        #expect(first.key == "receive", "\(moved.functions)")
        #expect(abs(first.share - 1) < 1e-9)
        #expect(first.inlinedInto == nil)
        #expect(!moved.functions.contains { $0.key == "update()" }, "\(moved.functions)")
        #expect(abs(moved.remainder) < 1e-9)
    }

    /// A dump part where `receive` and `complete` run a copy of `update` (4 instructions, 0x41
    /// and 0x51) that releases once per run (5 instructions, call sites 0x42 and 0x52), and,
    /// when `hoisted`, retain once more each from a site the optimizer left without a source
    /// location (0x4e and 0x5e), and release once more from update's copy.
    static func hoisted(events: Int, hoisted: Bool, in folder: URL, name: String) throws -> CallgrindDump {
        let n = hoisted ? 2 : 1
        func function(_ name: String, _ base: Int) -> String {
            var lines = [
                "fn=\(name)", "0x\(String(base, radix: 16)) 0 \(10 * events)",
                "0x\(String(base + 1, radix: 16)) 0 \(4 * events)", "cfn=swift_release", "calls=\(n * events) 0x30 0",
                "0x\(String(base + 2, radix: 16)) 0 \(5 * n * events)",
            ]
            if hoisted {
                lines += [
                    "cfn=swift_retain", "calls=\(events) 0x20 0", "0x\(String(base + 14, radix: 16)) 0 \(5 * events)",
                ]
            }
            return lines.joined(separator: "\n")
        }
        let each = 10 * events + 4 * events + 5 * n * events + (hoisted ? 5 * events : 0)
        let text = """
            \(dumpHeader("sync-more atomic \(events)", summary: 2 * each))
            \(function("receive", 0x40))
            \(function("complete", 0x50))
            fn=swift_release
            0x30 0 \(2 * 5 * n * events)
            fn=swift_retain
            0x20 0 \(hoisted ? 2 * 5 * events : 0)
            totals: \(2 * each)
            """
        return try writtenDump(text, in: folder, name: name)
    }

    @Test(
        "a retain the optimizer moved out of an inlined helper, left without a source location: charged with the helper's own releases"
    )
    func test_attribution_hoistedRetainsFollowTheHelpersOwn() throws {
        let site = { (copy: String) in InlinedFrames.Site(helper: "update()", instance: copy) }
        let none = InlinedFrames.Site(helper: InlinedFrames.unplaced, instance: "")
        let helpers: [String: [UInt64: InlinedFrames.Site]] = [
            "/bin/tool": [0x41: site("r"), 0x42: site("r"), 0x51: site("c"), 0x52: site("c"), 0x4e: none, 0x5e: none]
        ]
        func profile(_ hoisted: Bool) throws -> ResultsFile.CallProfile {
            let folder = temporaryFolder()
            return .between(
                try Self.hoisted(events: 100, hoisted: hoisted, in: folder, name: "low.1"),
                try Self.hoisted(events: 300, hoisted: hoisted, in: folder, name: "high.1"), span: 200,
                helpers: helpers)
        }
        let (a, b) = (try profile(false), try profile(true))
        #expect(b.inlined?.contains { $0.helper == InlinedFrames.unplaced && $0.into == "receive" } == true)
        let moved = try #require(Comparison.attribution("sync-more", "atomic", 38, 58, a, b))
        let first = try #require(moved.functions.first)
        #expect(first.key == "update()", "\(moved.functions)")
        #expect(abs(first.share - 1) < 1e-9, "\(moved.functions)")
        #expect(!moved.functions.contains { $0.key == InlinedFrames.unplaced })
        #expect(abs(moved.remainder) < 1e-9)
    }

    /// llvm-symbolizer's JSON for one address: `frames` (function, file), innermost first.
    static func symbolized(_ address: String, _ frames: [(String, String)]) -> String {
        let symbols = frames.map {
            #"{"Column":1,"Discriminator":0,"FileName":"\#($0.1)","FunctionName":"\#($0.0)","Line":2,"StartAddress":"","StartFileName":"\#($0.1)","StartLine":2}"#
        }
        return #"{"Address":"\#(address)","ModuleName":"stepbench","Symbol":[\#(symbols.joined(separator: ","))]}"#
    }

    @Test(
        "an address's helper: the innermost frame of our own code, a closure read as its function, never the function itself"
    )
    func test_inlinedFrames_helperOfAnAddress() {
        let ours = "/work/repo/Sources/Stepping/Designs/Atomic.swift"
        let stdlib = "/home/build-user/swift/stdlib/public/core/Unmanaged.swift"
        let dependency = "/work/repo/Benchmarks/.build/checkouts/swift-atomics/Sources/Atomics/Atomic.swift"
        let text = [
            // a retain made by the standard library's Unmanaged, in update(), inlined into receive
            Self.symbolized("0x10", [("Unmanaged.passRetained(_:)", stdlib), ("update()", ours), ("receive()", ours)]),
            // receive's own transition closure, passed through update() and inlined with it
            Self.symbolized(
                "0x11", [("closure #1 in receive()", ours), ("update()", ours), ("receive()", ours)]),
            // a dependency's atomic load inlined into receive itself
            Self.symbolized("0x12", [("ManagedAtomic.load()", dependency), ("receive()", ours)]),
            // a helper's closure inlined into receive: the helper's
            Self.symbolized("0x13", [("closure #2 in update()", ours), ("receive()", ours)]),
            // the release of a defer block in update(), inlined with it: update()'s
            Self.symbolized(
                "0x15", [("$defer #1 <A, B>() in update()", ours), ("update()", ours), ("receive()", ours)]),
            // the optimizer's own code in receive: no source location
            #"{"Address":"0x16","ModuleName":"stepbench","Symbol":[{"Column":0,"Discriminator":0,"FileName":"<compiler-generated>","FunctionName":"receive()","Line":0,"StartAddress":"0x0","StartFileName":"","StartLine":0}]}"#,
            // no inlining
            Self.symbolized("0x14", [("receive()", ours)]),
        ].joined(separator: "\n")
        let helpers = InlinedFrames.helpers(symbolized: text)
        #expect(
            helpers.mapValues(\.helper) == [
                0x10: "update()", 0x13: "update()", 0x15: "update()", 0x16: InlinedFrames.unplaced,
            ])
        #expect(helpers[0x15]?.instance == "2:1", "the defer block is part of update()'s copy")
        // update()'s copy is told by where it was called from: receive's line 2, column 1
        #expect(helpers[0x10]?.instance == "2:1")
        #expect(helpers[0x13]?.instance == "2:1")
    }
}
