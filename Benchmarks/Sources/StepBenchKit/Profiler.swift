import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// `stepbench profile`: exact instructions per element under valgrind's callgrind, and where
/// they go, function by function; and, with ``PathProfiler``, exact counts per event of every
/// path of every design.
///
/// Each (scenario, design) runs twice in a child process — `stepbench child` with a
/// ``ProfileRequest`` for `low` and then `high` elements, one repetition, no warm-up,
/// jemalloc's thread caches on as in the timing pass — on a copy of this binary stripped of
/// debug information (valgrind 3.19 cannot read Swift 6.3's). Instructions are counted between the scenario's
/// ``MeasuredWindow``'s open and close, in every thread (the actors call the stepper on their
/// own executor's thread), from the window's own dump part, which the profiler checks was
/// written exactly once; Swift's hashing is made deterministic (`SWIFT_DETERMINISTIC_HASHING=1`),
/// so two profiles of one build count the same instructions. Per element: the difference of the
/// two windows' totals over the difference of their elements, and the same per function
/// (exclusive instructions), so the window's one-off work (first-use metadata, the
/// subscription) cancels out. Only single-thread scenarios are profiled: with more threads the
/// interleaving, and so the count, varies.
public struct Profiler {
    public static let scenarios: [ScenarioKind] = ScenarioKind.with(.profiled)
    /// How many functions each profile row keeps (the rest is small).
    public static let functionsKept = 12

    public var valgrind = "valgrind"
    public var elementsLow = 4_000
    public var elementsHigh = 12_000
    public var eventsLow = 200
    public var eventsHigh = 600
    public var progress: (String) -> Void = { _ in }
    /// Seconds a profiling child (one callgrind run) may take before it is killed and its
    /// target recorded `hung` (``ResultsFile/ProfileFault``); the profile goes on without it.
    public var watchdog: Double = Self.defaultWatchdog
    /// Far above the slowest child of the default profile (about a minute: the peers' paths).
    public static let defaultWatchdog: Double = 900
    /// How this tool starts its children (its stripped copy is started the same way).
    public var child: ChildProcess

    public init(child: ChildProcess) { self.child = child }

    /// Rejects scenarios that cannot be profiled exactly (more than one thread: the interleaving,
    /// and so the count, varies).
    public static func check(scenarios: [ScenarioKind]) throws {
        for s in scenarios where !Self.scenarios.contains(s) {
            throw ConfigurationError(
                .scenarios,
                "'\(s.rawValue)' cannot be profiled exactly (more than one thread); profiled scenarios: \(Self.scenarios.map(\.rawValue).joined(separator: ", "))"
            )
        }
    }

    /// The scenarios' rows, the rows of `paths` (none when empty), and the targets whose child
    /// crashed or hung (their rows missing).
    public func profile(scenarios: [ScenarioKind], paths: [StepPath], designs: [SteppingDesign]) throws -> (
        [ResultsFile.ProfileRow], [ResultsFile.PathRow], [ResultsFile.ProfileFault]
    ) {
        // A name of one length whatever the process id: the profiled child's argument strings
        // (the binary's path) sit on its stack, and their length moves what lies after them.
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stepbench-profile-"
                + String(String(getpid()).reversed()).padding(toLength: 10, withPad: "0", startingAt: 0))
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let binary = work.appendingPathComponent("stepbench")
        try FileManager.default.copyItem(at: child.executable, to: binary)
        try run("strip", ["-g", binary.path], timeLimit: 120)
        let stripped = child.running(binary)
        // the stripped copy's addresses are the original's, whose debug information says what
        // was inlined where (InlinedFrames)
        let debugInformation = InlinedFrames.debugInformation(copy: binary, original: child.executable)
        let (rows, faults) = try profile(
            scenarios: scenarios, designs: designs, child: stripped, work: work, debugInformation: debugInformation)
        var pathProfiler = PathProfiler()
        pathProfiler.debugInformation = debugInformation
        pathProfiler.valgrind = valgrind
        pathProfiler.progress = progress
        pathProfiler.watchdog = watchdog
        (pathProfiler.eventsLow, pathProfiler.eventsHigh) = (eventsLow, eventsHigh)
        let (pathRows, pathFaults) =
            paths.isEmpty
            ? ([], []) : try pathProfiler.profile(paths: paths, designs: designs, child: stripped, work: work)
        return (rows, pathRows, faults + pathFaults)
    }

    private func profile(
        scenarios: [ScenarioKind], designs: [SteppingDesign], child: ChildProcess, work: URL,
        debugInformation: [String: String]
    ) throws
        -> ([ResultsFile.ProfileRow], [ResultsFile.ProfileFault])
    {
        let targets = scenarios.flatMap { scenario in
            scenario.subjects(among: designs).map { ProfileRequest.Target(scenario, $0) }
        }
        // One target per core at a time (callgrind runs one thread at a time). Every child has
        // the same arguments (the request goes on stdin): the length of its arguments would move
        // what lies after them on its stack.
        let progressLock = NSLock()
        let counts = try parallelMap(targets) { target -> Result<(Counts, Counts), ChildFault> in
            let name = "\(target)"
            let (elementsLow, elementsHigh) = elements(of: target.subject)
            progressLock.withLock {
                progress("profiling \(name) (\(elementsLow) and \(elementsHigh) elements under callgrind)")
            }
            let low: Counts, high: Counts
            do {
                low = try count(child, target, elementsLow, work)
                high = try count(child, target, elementsHigh, work)
            } catch let fault as ChildFault {
                progressLock.withLock {
                    progress("\(fault.status.rawValue.uppercased()): profile \(name): \(fault.what)")
                }
                return .failure(fault)
            }
            guard high.total > low.total else {
                throw ScenarioFailure(
                    "profile \(name): \(high.total) instructions for \(elementsHigh) elements, not more than \(low.total) for \(elementsLow)"
                )
            }
            return .success((low, high))
        }
        var rows: [ResultsFile.ProfileRow] = []
        var faults: [ResultsFile.ProfileFault] = []
        let profiled = counts.flatMap { (try? $0.get()).map { [$0.0, $0.1] } ?? [] }
        let code = MachineCode.hashes(of: profiled)
        let helpers = InlinedFrames.helpers(of: profiled, debugInformation: debugInformation)
        for (target, counted) in zip(targets, counts) {
            let low: Counts, high: Counts
            switch counted {
            case .success(let windows): (low, high) = windows
            case .failure(let fault):
                faults.append(.init(scenario: target.scenario, design: target.subject, fault))
                continue
            }
            let (elementsLow, elementsHigh) = elements(of: target.subject)
            let span = Double(elementsHigh - elementsLow)
            rows.append(
                .init(
                    scenario: target.scenario, design: target.subject, elementsLow: elementsLow,
                    elementsHigh: elementsHigh, instructionsLow: low.total, instructionsHigh: high.total,
                    instructionsPerElement: Double(high.total - low.total) / span,
                    topFunctions: ResultsFile.FunctionCost.top(
                        low.functions, high.functions, span: span, keeping: Self.functionsKept),
                    collection: .measuredWindow,
                    callProfile: .between(
                        low, high, span: span, code: code, helpers: helpers.isEmpty ? nil : helpers)))
        }
        return (rows, faults)
    }

    /// The two windows' elements of `subject`: a quarter of ``elementsLow`` and ``elementsHigh``
    /// for a design whose counts follow the schedule (``SteppingDesign/Traits/countsFollowTheSchedule``:
    /// its count is not exact anyway, and at 20–60 thousand instructions per element under
    /// callgrind its windows were most of the profile's time).
    func elements(of subject: Subject) -> (low: Int, high: Int) {
        subject.design?.traits.countsFollowTheSchedule == true
            ? (elementsLow / 4, elementsHigh / 4) : (elementsLow, elementsHigh)
    }

    /// One window's instructions: its dump part (total, exclusive instructions per function,
    /// call edges).
    typealias Counts = CallgrindDump

    /// One callgrind run: the measured window's own dump part (checked to be the run's only
    /// window).
    private func count(
        _ child: ChildProcess, _ target: ProfileRequest.Target, _ elements: Int,
        _ work: URL
    ) throws -> CallgrindDump {
        let out = work.appendingPathComponent(
            "callgrind.\(target.scenario.rawValue).\(target.subject).\(elements)")
        let (command, arguments) = child.underCallgrind(valgrind, output: out)
        let request = ProfileRequest(target, elements: elements)
        try run(command, arguments, input: try JSONEncoder().encode(ChildRequest.profile(request)), timeLimit: watchdog)
        let windows = try CallgrindDump.parts(of: out).filter {
            $0.trigger == "Client Request: \(MeasuredWindow.labelPrefix)"
        }
        guard windows.count == 1, let window = windows.first else {
            throw ScenarioFailure(
                "profile \(target): the measured window was entered \(windows.count) times, expected once"
            )
        }
        return window
    }

    private func run(_ command: String, _ arguments: [String], input: Data? = nil, timeLimit: Double? = nil) throws {
        _ = try Measuring.instructions.run(
            command, arguments, input: input, what: "profile: \(command)", timeLimit: timeLimit)
    }
}

extension ResultsFile {
    /// A results file holding only `stepbench profile` rows.
    public static func profiled(
        _ profiles: [ProfileRow], paths: [PathRow], faults: [ProfileFault] = [], machine: MachineFingerprint,
        elements: Int
    ) -> ResultsFile {
        var file = ResultsFile(
            schema: currentSchema, createdAt: ISO8601DateFormatter().string(from: Date()), machine: machine,
            configuration: .init(
                preset: .quick, repetitions: 1, warmup: false, threads: [1],
                elementsOverride: elements, handoff: "none (callgrind, single thread)"),
            rows: [], peakRSSBytes: ResourceUsage.now().peakRSSBytes, profiles: profiles,
            paths: paths.isEmpty ? nil : paths, catalog: .current,
            costSplits: {
                let s = CostSplit.splits(profiles: profiles, paths: paths); return s.isEmpty ? nil : s
            }())
        file.profileFaults = faults.isEmpty ? nil : faults
        file.declaredKind = .profile
        return file
    }
}
