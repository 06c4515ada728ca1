import Foundation
@_spi(Measurement) import Stepping
import Testing

@testable import StepBenchKit
@testable import StepBenchScenarios

/// The path drivers, how their callgrind windows are read, and how their rows are compared.
@Suite("Path drivers and their exact counts")
struct PathTests {
    @Test(
        "every path drives every design, floor-step and the floor (where it has one) and verifies each event",
        arguments: StepPath.allCases)
    func test_path_drivesAndVerifies(path: StepPath) throws {
        AllocationCounter.install()
        for subject in Subject.all where path.isDefined(for: subject) {
            _ = try path.drive(subject, events: 30, label: nil)
            _ = try path.drive(subject, events: 30, label: "test \(path.rawValue)")
        }
        #expect(path.isDefined(for: .floorStep))  // floor-step has every path: the API's part of each
    }

    @Test("a child that fails under valgrind: the message shows the child's error, not valgrind's summary")
    func test_child_failureUnderValgrindShowsTheChildsError() {
        // What valgrind writes after its guest's last word, as CI saw it hide the error
        let script = """
            echo "Error: sync-more async-channel: input 3: not seen within 10 s" >&2
            for line in "Events    : Ir" "Collected : 153616429" "" "I   refs:      153,616,429"; do
                echo "==11306== $line" >&2
            done
            exit 1
            """
        #expect {
            try Measuring.instructions.run("sh", ["-c", script], what: "profile: the path child of x")
        } throws: {
            let message = "\($0)"
            return message.contains("the path child of x exited 1")
                && message.contains("input 3: not seen within 10 s") && !message.contains("I   refs")
        }
        // A child that wrote nothing of its own: valgrind's lines are all there is to show
        #expect(Measuring.tail(of: "==7== a\n==7== b\n") == "==7== a / ==7== b")
        #expect(Measuring.tail(of: "one\n==x== two\n= three") == "one / ==x== two / = three")
    }

    /// A design that declares rule C6 broken: it has no re-entrant-completion path.
    static let breaksC6 = SteppingDesign.allCases.first { $0.traits.knownIssue(.c6) != nil }!

    @Test("a path that is not defined for a design refuses to run, naming both")
    func test_path_undefinedIsRefused() {
        AllocationCounter.install()
        #expect { try StepPath.reentrantCompletion.drive(.design(Self.breaksC6), events: 3, label: nil) } throws: {
            "\($0)".contains("reentrant-completion") && "\($0)".contains(Self.breaksC6.name)
        }
        #expect(throws: ScenarioFailure.self) { try StepPath.stalePromise.drive(.floor, events: 3, label: nil) }
    }

    @Test("a request's windows: every defined path at each count, labelled; a round trip through JSON")
    func test_request_windowsAndCoding() throws {
        let request = PathRequest(subject: .design(Self.breaksC6), paths: StepPath.allCases, events: [5, 15])
        #expect(request.windows.count == (StepPath.allCases.count - 1) * 2)  // no reentrant-completion
        #expect(request.windows.first?.label == "sync-more \(Self.breaksC6) 5")
        let floor = PathRequest(subject: .floor, paths: StepPath.allCases, events: [5])
        #expect(floor.windows.map(\.path) == StepPath.allCases.filter(\.hasFloor))
        let floorStep = PathRequest(subject: .floorStep, paths: StepPath.allCases, events: [5])
        #expect(floorStep.windows.first?.label == "sync-more floor-step 5")
        #expect(try JSONDecoder().decode(PathRequest.self, from: JSONEncoder().encode(floorStep)) == floorStep)
        let decoded = try JSONDecoder().decode(PathRequest.self, from: JSONEncoder().encode(request))
        #expect(decoded == request)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PathRequest.self, from: Data(#"{"subject":"nope","paths":[],"events":[]}"#.utf8))
        }
    }

    @Test("the profiler's child request: a round trip through JSON, one verified repetition, no racing scenario")
    func test_profileRequest_runsOneRepetition() throws {
        let request = ChildRequest.profile(ProfileRequest(.init(.floorStep, .floor), elements: 500))
        let decoded = try JSONDecoder().decode(ChildRequest.self, from: JSONEncoder().encode(request))
        #expect(decoded == request)
        let answer = try JSONDecoder().decode(RepetitionResult.self, from: decoded.answer())
        #expect(answer.elements == 500)
        #expect(throws: ScenarioFailure.self) {
            try ProfileRequest(.init(.asyncStep, .design(.default)), elements: 10).run()
        }
        #expect(throws: ScenarioFailure.self) {  // a floor scenario has no design
            try ProfileRequest(.init(.floorSync, .design(.default)), elements: 10).run()
        }
    }

    @Test("a pass's child request: a round trip through JSON, the run's rows; counting only in a counting build")
    func test_passRequest_runsThePass() throws {
        var configuration = RunConfiguration()
        configuration.designs = [.default]
        configuration.scenarios = [.syncStep, .floorSync]
        configuration.elements = 400
        configuration.repetitions = 2
        configuration.warmup = false
        configuration.allowDebug = true
        let request = ChildRequest.pass(PassRequest(configuration, pass: .timing, orderSeed: 7))
        #expect(try JSONDecoder().decode(ChildRequest.self, from: JSONEncoder().encode(request)) == request)
        let file = try JSONDecoder().decode(ResultsFile.self, from: request.answer())
        #expect(file.rows.map(\.scenario) == [.syncStep, .floorSync])
        #expect(file.rows.allSatisfy { $0.status == .ok && $0.repetitions.count == 2 && $0.elements == 400 })
        #expect(file.configuration.orderSeed == 7)
        let counting = PassRequest(configuration, pass: .counting, orderSeed: 7)
        #expect(counting.configuration.repetitions == RunPasses.allocationRepetitions(timing: 2))
        if !Contention.isCounting { expectFailure(.toolFailed) { try counting.run() } }
    }

    @Test("paths whose counts follow the schedule are driven at the request's inexact counts; older requests read")
    func test_pathRequest_inexactPathsAtTheirOwnCounts() throws {
        let scheduled = try #require(SteppingDesign.described.first { $0.traits.countsFollowTheSchedule })
        let request = PathRequest(
            subject: .design(scheduled), paths: [.syncMore, .stalePromise], events: [200, 600],
            inexactEvents: [50, 150])
        #expect(request.events(of: .syncMore) == [50, 150] && request.events(of: .stalePromise) == [200, 600])
        #expect(request.windows.map(\.events) == [50, 150, 200, 600])
        let exact = PathRequest(
            subject: .design(.default), paths: [.syncMore], events: [200, 600], inexactEvents: [50, 150])
        #expect(exact.events(of: .syncMore) == [200, 600])
        let older = #"{"subject":"floor-step","paths":["sync-more"],"events":[200,600]}"#
        let decoded = try JSONDecoder().decode(PathRequest.self, from: Data(older.utf8))
        #expect(decoded.inexactEvents == nil && decoded.events(of: .syncMore) == [200, 600])
    }

    @Test("the repetition budget: halvings to fit, at most 1/32 and 8 elements; nothing sized without a need")
    func test_repetitionBudget_sizesByHalving() {
        // 20,000 of 200,000 in 0.14 s projects 1.4 s: halved 3 times to 25,000 (0.175 s)
        #expect(BenchmarkRunner.sized(200_000, warm: 20_000, seconds: 0.14, budget: 0.25) == 25_000)
        #expect(BenchmarkRunner.sized(200_000, warm: 20_000, seconds: 0.02, budget: 0.25) == 200_000)
        #expect(BenchmarkRunner.sized(200_000, warm: 20_000, seconds: 100, budget: 0.25) == 6_250)
        #expect(BenchmarkRunner.sized(40, warm: 4, seconds: 100, budget: 0.25) == 10)
        var c = RunConfiguration()
        #expect(c.effectiveRepetitionBudget == 0.2 && c.sizesAtWarmup)
        c.elements = 100
        #expect(c.effectiveRepetitionBudget == nil, "an explicit element count is never sized")
        c.elements = nil
        c.repetitionBudget = 0
        #expect(c.effectiveRepetitionBudget == nil)
        c.repetitionBudget = nil
        c.preset = .brief
        #expect(c.effectiveRepetitionBudget == nil)
        c.preset = .quick
        c.warmup = false
        #expect(!c.sizesAtWarmup, "the warm-up sizes")
        c.repetitionBudget = -1
        #expect(throws: ConfigurationError.self) { try c.validate() }
    }

    @Test("a run sized at its warm-up: its rows say the elements; passes after it count over those")
    func test_repetitionBudget_sizesAtWarmupAndPassesFollow() throws {
        var configuration = RunConfiguration()
        configuration.designs = [.default]
        configuration.scenarios = [.syncStep, .floorSync, .paceJitter]
        configuration.repetitions = 1
        configuration.allowDebug = true
        configuration.repetitionBudget = 1e-9  // every combination over it: sized to 1/32 …
        let file = BenchmarkRunner(configuration: configuration).run()
        #expect(file.declaredKind == .run)
        let full = ScenarioKind.syncStep.elements(.quick), paced = ScenarioKind.paceJitter.elements(.quick)
        // … but the one its timers pace
        #expect(file.rows.map(\.elements) == [full / 32, full / 32, paced])
        #expect(
            file.rows.allSatisfy { row in
                row.status == .ok && row.repetitions.allSatisfy { $0.elements == row.elements }
            })
        #expect(file.configuration.repetitionBudget == 1e-9)
        // the budget is in the file as written (a child's answer, a results file)
        let decoded = try JSONDecoder().decode(ResultsFile.self, from: JSONOutput.encode(file))
        #expect(decoded.configuration.repetitionBudget == 1e-9)
        configuration.scenarios = [.syncStep, .floorSync]
        configuration.sizedElements = Array(file.rows.map(\.elements).prefix(2))
        #expect(BenchmarkRunner.combinations(of: configuration).map(\.elements) == [full / 32, full / 32])
        var allocations = configuration
        allocations.countsOnly = true  // as a counting pass's child runs it
        #expect(
            BenchmarkRunner.combinations(of: allocations).map(\.elements)
                == [
                    ScenarioKind.syncStep.countingElements(full / 32),
                    ScenarioKind.floorSync.countingElements(full / 32),
                ])
        // merged processes that sized a row differently are refused, by name
        var other = file
        other.rows[0].elements = full / 16
        for r in other.rows[0].repetitions.indices { other.rows[0].repetitions[r].elements = full / 16 }
        expectFailure(.incompatible) { try ResultsFile.mergedPerProcess([file, other, file]) }
    }

    @Test("a callgrind dump part: trigger, total, exclusive costs by function and address")
    func test_callgrindDump_readsAPart() throws {
        let folder = temporaryFolder()
        let text = """
            version: 1
            cmd: stepbench child
            part: 1
            desc: Trigger: Client Request: stepbench-window sync-more atomic 200
            positions: instr line
            events: Ir
            summary: 19
            ob=/bin/tool
            fl=???
            fn=caller
            0x10 0 3
            cob=/bin/tool
            cfn=callee
            calls=1 0x20 0
            0x11 0 100
            0x12 0 4
            fn=callee
            0x20 0 7
            0x21 0 5
            totals: 19
            """
        let url = folder.appendingPathComponent("out.1")
        try text.write(to: url, atomically: true, encoding: .utf8)
        let dump = try CallgrindDump(contentsOf: url)
        #expect(dump.trigger == "Client Request: stepbench-window sync-more atomic 200")
        #expect(dump.total == 19)
        #expect(dump.functions == ["caller": 7, "callee": 12])  // the call's inclusive 100 is not the caller's own
        #expect(dump.addresses["/bin/tool"]?[0x21]?.cost == 5)
        #expect(try CallgrindDump.parts(of: folder.appendingPathComponent("out")).count == 1)
        try text.replacingOccurrences(of: "summary: 19", with: "summary: 20")
            .replacingOccurrences(of: "totals: 19", with: "totals: 20").write(
                to: url, atomically: true, encoding: .utf8)
        #expect(throws: CallgrindDumpError.self) { try CallgrindDump(contentsOf: url) }
        // Cost lines that add up to more than the part counted (its summary) hold costs from
        // before the window: a window opened with CALLGRIND_ZERO_STATS wrote such parts, and the
        // count read from them depended on what the process ran before the window.
        try text.replacingOccurrences(of: "summary: 19", with: "summary: 18").write(
            to: url, atomically: true, encoding: .utf8)
        #expect { try CallgrindDump(contentsOf: url) } throws: {
            "\($0)".contains("add up to 19 instructions, the part counted 18")
        }
        try text.replacingOccurrences(of: "summary: 19\n", with: "").write(to: url, atomically: true, encoding: .utf8)
        #expect { try CallgrindDump(contentsOf: url) } throws: { "\($0)".contains("no summary line") }
        // The part a window's open writes (what ran before it, its lines above its summary) is
        // not read: the run's parts are the windows.
        try text.write(to: url, atomically: true, encoding: .utf8)
        try text.replacingOccurrences(of: "stepbench-window sync-more atomic 200", with: MeasuredWindow.openLabel)
            .replacingOccurrences(of: "summary: 19", with: "summary: 2")
            .write(to: folder.appendingPathComponent("out.2"), atomically: true, encoding: .utf8)
        let parts = try CallgrindDump.parts(of: folder.appendingPathComponent("out"))
        #expect(parts.map(\.trigger) == ["Client Request: stepbench-window sync-more atomic 200"])
    }

    @Test("synchronising instructions: lock-prefixed, xchg with memory, mfence; nothing else")
    func test_synchronisingInstructions_recognised() {
        let lines = [
            "  4a1f2:\tlock cmpxchg %rcx,(%rdx)": UInt64(0x4a1f2),
            "   10:\tlock xadd %rax,0x8(%rdi)": 0x10,
            "   20:\txchg   %rax,(%rdi)": 0x20,
            "   30:\tmfence": 0x30,
        ]
        for (line, address) in lines { #expect(SynchronisingInstructions.synchronisingAddress(line) == address) }
        for line in ["   40:\txchg   %ax,%ax", "   50:\tmov    %rax,(%rdi)", "   60:\tcmpxchg %rcx,(%rdx)", "nothing"] {
            #expect(SynchronisingInstructions.synchronisingAddress(line) == nil, "\(line)")
        }
    }

    static func row(
        _ path: StepPath = .deferredMore, design: Subject = "atomic", instructions: Double = 1_000,
        synchronising: Double = 4, allocations: Double = 0, exact: Bool = true
    ) -> ResultsFile.PathRow {
        ResultsFile.PathRow(
            path: path, design: design, eventsLow: 200, eventsHigh: 600, instructionsPerEvent: instructions,
            synchronisingPerEvent: synchronising, allocationsPerEvent: allocations, topFunctions: [],
            synchronisingFunctions: [], exact: exact)
    }

    static func file(_ rows: [ResultsFile.PathRow], swift: String = "Swift 6.3.1") -> ResultsFile {
        var f = ResultsFileTests.sample()
        f.rows = []
        f.paths = rows
        f.machine.swiftVersion = swift
        return f
    }

    @Test("a design's cost over the floor splits into the API's (floor-step − floor) and its own")
    func test_costSplit_apiAndSynchronisation() {
        func profile(_ scenario: ScenarioKind, _ design: Subject, _ perElement: Double) -> ResultsFile.ProfileRow {
            ResultsFile.ProfileRow(
                scenario: scenario, design: design, elementsLow: 1, elementsHigh: 3, instructionsLow: 0,
                instructionsHigh: 0, instructionsPerElement: perElement, topFunctions: [])
        }
        let profiles = [
            profile(.syncStep, "atomic", 1_100), profile(.floorSync, "floor", 500), profile(.floorStep, "floor", 900),
        ]
        let paths = [
            Self.row(.deferredMore, design: "floor", instructions: 480, synchronising: 6),
            Self.row(.deferredMore, design: "floor-step", instructions: 1_000, synchronising: 10),
            Self.row(.deferredMore, design: "atomic", instructions: 1_400, synchronising: 22),
            Self.row(.stalePromise, design: "floor-step", instructions: 40, synchronising: 0),
            Self.row(.stalePromise, design: "actor", instructions: 86, synchronising: 2, exact: false),
        ]
        let splits = ResultsFile.CostSplit.splits(profiles: profiles, paths: paths)
        let sync = splits.first { $0.path == "sync-step" && $0.design == "atomic" }
        #expect(sync?.api == 400 && sync?.synchronisation == 200 && sync?.synchronisingOverFloorStep == nil)
        let deferred = splits.first { $0.path == "deferred-more" && $0.design == "atomic" }
        #expect(deferred?.api == 520 && deferred?.synchronisation == 400 && deferred?.synchronisingOverFloorStep == 12)
        let stale = splits.first { $0.path == "stale-promise" }
        #expect(stale?.floor == nil && stale?.api == nil && stale?.synchronisation == 46 && stale?.exact == false)
        #expect(splits.count == 3)  // the floors themselves are not split
        #expect(ResultsFile.CostSplit.splits(profiles: [], paths: [Self.row()]).isEmpty)  // no floor-step: none
    }

    @Test("compare gates exact path rows: +1 synchronising or allocation per event, +1% instructions")
    func test_compare_pathRows() {
        let base = Self.file([Self.row()])
        func verdicts(_ changed: ResultsFile.PathRow) -> [Metric: Comparison.Verdict] {
            let c = Comparison.compare(baseline: base, current: Self.file([changed]))
            return Dictionary(uniqueKeysWithValues: c.rows.map { ($0.metric, $0.verdict) })
        }
        #expect(verdicts(Self.row()).values.allSatisfy { $0 == .unchanged })
        #expect(verdicts(Self.row(synchronising: 5))[.synchronisingPerEvent] == .regression)
        #expect(verdicts(Self.row(allocations: 1))[.allocationsPerEvent] == .regression)
        #expect(verdicts(Self.row(instructions: 1_010))[.instructionsPerEvent] == .regression)
        #expect(verdicts(Self.row(instructions: 1_004))[.instructionsPerEvent] == .unchanged)
        #expect(verdicts(Self.row(synchronising: 3))[.synchronisingPerEvent] == .improvement)
        // rows whose counts follow the schedule (the actors' hand-offs) are not compared
        let loose = Comparison.compare(
            baseline: Self.file([Self.row(exact: false)]),
            current: Self.file([Self.row(instructions: 2_000, exact: false)]))
        #expect(loose.rows.isEmpty)
        // a row measured only in the baseline says so
        let gone = Comparison.compare(baseline: base, current: Self.file([]))
        #expect(gone.rows.map(\.verdict) == [.onlyInBaseline])
    }

    @Test("exact counts of two toolchains are not compared: the message names both")
    func test_compare_refusesTwoToolchains() throws {
        let a = Self.file([Self.row()], swift: "Swift version 6.3.1"),
            b = Self.file([Self.row()], swift: "Swift version 6.4")
        #expect { try Comparison.checkToolchains(baseline: a, current: b) } throws: {
            "\($0)".contains("6.3.1") && "\($0)".contains("6.4")
        }
        try Comparison.checkToolchains(baseline: a, current: a)
    }

    @Test("the catalog publishes every path with its subjects and which are exact")
    func test_catalog_paths() {
        let paths = Catalog.current.paths
        #expect(paths.map(\.name) == StepPath.allCases.map(\.rawValue))
        let stale = paths.first { $0.name == "stale-promise" }
        #expect(stale?.exact == stale?.subjects)  // no actor hand-off: exact for every design
        let deferred = paths.first { $0.name == "deferred-more" }
        #expect(deferred?.subjects.contains("floor") == true)
        #expect(deferred?.exact.contains("atomic") == true)
        // Exact for a design whose counts do not follow the schedule, whatever its delivery.
        for design in SteppingDesign.allCases {
            #expect(deferred?.exact.contains(design.rawValue) == !design.traits.countsFollowTheSchedule)
        }
        #expect(SteppingDesign.allCases.contains { $0.traits.countsFollowTheSchedule })
    }
}
