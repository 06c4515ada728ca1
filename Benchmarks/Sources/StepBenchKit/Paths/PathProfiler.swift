import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance

/// `stepbench profile`'s path rows: for every design (and the floor, where a path has one) and
/// every ``StepPath``, exact counts per event: instructions and synchronising instructions
/// (callgrind, every thread inside the driver's measured window) and allocations (jemalloc with
/// its thread caches off, in a run outside valgrind).
///
/// One child process per design and tool (`stepbench child`, a ``PathRequest`` on stdin) drives
/// every path at `eventsLow` and `eventsHigh` events, one window each; per event is the
/// difference of the two windows over the difference of their events, so set-up and the first
/// use of anything cancel out. A path whose counts follow the schedule for the design (not
/// exact: ``StepPath/countsAreExact(for:)``) is driven at an eighth of those events: its count is
/// shown, not held, and an asynchronous design's hand-offs under callgrind made its windows most
/// of the profile's time. Each window is a callgrind dump part of its own, labelled; the
/// profiler checks that the child wrote exactly the windows it asked for, each once.
public struct PathProfiler {
    public var valgrind = "valgrind"
    public var eventsLow = 200
    public var eventsHigh = 600
    public var progress: (String) -> Void = { _ in }
    /// Seconds one child may take before it is killed and its subject's paths recorded `hung`.
    public var watchdog: Double = Profiler.defaultWatchdog
    /// For each profiled object, the file that holds its debug information
    /// (``InlinedFrames/helpers(of:debugInformation:)``).
    var debugInformation: [String: String] = [:]
    /// How many functions each row keeps.
    public static let functionsKept = 8

    public init() {}

    /// Profiles `paths` for `designs` and the floor. `child`: a copy of this tool stripped of
    /// debug information (valgrind 3.19 cannot read Swift 6.3's), in `work`.
    public func profile(paths: [StepPath], designs: [SteppingDesign], child: ChildProcess, work: URL) throws
        -> ([ResultsFile.PathRow], [ResultsFile.ProfileFault])
    {
        var synchronising = SynchronisingInstructions()
        var rows: [ResultsFile.PathRow] = []
        let requests = ([.floor, .floorStep] + designs.map(Subject.design)).map {
            PathRequest(
                subject: $0, paths: paths, events: [eventsLow, eventsHigh],
                inexactEvents: [eventsLow / 8, eventsHigh / 8])
        }.filter { !$0.windows.isEmpty }
        // The children, one subject per core at a time: each child's counts are its own (one
        // process, its own hash seeds and arguments), whatever runs beside it.
        let progressLock = NSLock()
        let measured = try parallelMap(requests) {
            request -> Result<([PathResponse.Window], [String: CallgrindDump]), ChildFault> in
            let subject = request.subject.name
            progressLock.withLock {
                progress(
                    "profiling the paths of \(subject) (\(eventsLow) and \(eventsHigh) events, natively and under callgrind)"
                )
            }
            let allocations: [PathResponse.Window]
            let output = work.appendingPathComponent("paths.\(subject)")
            do {
                allocations = try run(child, request, callgrindOutput: nil)
                _ = try run(child, request, callgrindOutput: output)
            } catch let fault as ChildFault {
                progressLock.withLock {
                    progress("\(fault.status.rawValue.uppercased()): the paths of \(subject): \(fault.what)")
                }
                return .failure(fault)
            }
            // read here, beside the next child's run: reading every dump after the last child
            // made the profile's tail (tens of seconds with the peers)
            let started = monotonicNanoseconds()
            let dumps = try windows(of: request, in: CallgrindDump.parts(of: output))
            progressLock.withLock {
                progress(
                    "read the callgrind dumps of \(subject) in \(String(format: "%.1f", Double(monotonicNanoseconds() - started) / 1e9)) s"
                )
            }
            return .success((allocations, dumps))
        }
        let measuredDumps = measured.flatMap { (try? $0.get()).map { Array($0.1.values) } ?? [] }
        try synchronising.prepare(for: measuredDumps)
        let code = MachineCode.hashes(of: measuredDumps)
        let helpers = InlinedFrames.helpers(of: measuredDumps, debugInformation: debugInformation)
        var faults: [ResultsFile.ProfileFault] = []
        for (request, result) in zip(requests, measured) {
            let subject = request.subject
            let allocations: [PathResponse.Window], dumps: [String: CallgrindDump]
            switch result {
            case .success(let measured): (allocations, dumps) = measured
            case .failure(let fault):
                faults.append(.init(scenario: nil, design: subject, fault))
                continue
            }
            for path in paths where path.isDefined(for: subject) {
                let events = request.events(of: path)
                let (eventsLow, eventsHigh) = (events[0], events[1])
                let low = dumps[request.label(path, eventsLow)]!, high = dumps[request.label(path, eventsHigh)]!
                let span = Double(eventsHigh - eventsLow)
                func perEvent(_ a: UInt64, _ b: UInt64) -> Double { (Double(b) - Double(a)) / span }
                let allocationsLow = allocations.first { $0.path == path && $0.events == eventsLow }!.allocations
                let allocationsHigh = allocations.first { $0.path == path && $0.events == eventsHigh }!.allocations
                let functions = ResultsFile.FunctionCost.top(
                    low.functions, high.functions, span: span, keeping: Self.functionsKept)
                let (syncLow, syncHigh) = (try synchronising.count(in: low), try synchronising.count(in: high))
                rows.append(
                    ResultsFile.PathRow(
                        path: path, design: subject, eventsLow: eventsLow, eventsHigh: eventsHigh,
                        instructionsPerEvent: perEvent(low.total, high.total),
                        synchronisingPerEvent: perEvent(syncLow.total, syncHigh.total),
                        allocationsPerEvent: perEvent(allocationsLow, allocationsHigh),
                        topFunctions: functions,
                        synchronisingFunctions: ResultsFile.FunctionCost.top(
                            syncLow.functions, syncHigh.functions, span: span, keeping: .max),
                        exact: path.countsAreExact(for: subject),
                        callProfile: .between(
                            low, high, span: span, code: code, helpers: helpers.isEmpty ? nil : helpers)))
            }
        }
        // Every window synchronises (the driver's own semaphore, if nothing else): none found means
        // the disassembly was not understood, and a gate on it would pass anything.
        if !rows.isEmpty, rows.allSatisfy({ $0.synchronisingPerEvent == 0 }) {
            throw CallgrindDumpError(
                "no synchronising instruction found in any window: objdump's output was not understood (x86-64 only)")
        }
        return (rows, faults)
    }

    /// The dump of each window `request` opens, by label; throws unless each was written
    /// exactly once and no other window was.
    private func windows(of request: PathRequest, in parts: [CallgrindDump]) throws -> [String: CallgrindDump] {
        let prefix = "Client Request: \(MeasuredWindow.labelPrefix) "
        var found: [String: CallgrindDump] = [:]
        for part in parts where part.trigger.hasPrefix(prefix) {
            let label = String(part.trigger.dropFirst(prefix.count))
            guard found.updateValue(part, forKey: label) == nil else {
                throw CallgrindDumpError("the window '\(label)' was written twice")
            }
        }
        let expected = Set(request.windows.map(\.label))
        guard Set(found.keys) == expected else {
            throw CallgrindDumpError(
                "windows written: \(found.keys.sorted()); expected each of \(expected.sorted()) once")
        }
        return found
    }

    /// Runs the child on `request`: natively with exact allocation counts, or under callgrind
    /// writing its dumps to `callgrindOutput`. Returns the child's windows.
    private func run(_ child: ChildProcess, _ request: PathRequest, callgrindOutput: URL?) throws
        -> [PathResponse.Window]
    {
        // Natively: exact allocation counts. Under callgrind: exact instructions.
        let measuring: Measuring = callgrindOutput == nil ? .counts : .instructions
        let (command, arguments) =
            callgrindOutput.map { child.underCallgrind(valgrind, output: $0) }
            ?? (child.executable.path, child.arguments)
        let answer = try measuring.run(
            command, arguments, input: try JSONEncoder().encode(ChildRequest.paths(request)),
            what: "profile: the path child of \(request.subject)", timeLimit: watchdog)
        do { return try JSONDecoder().decode(PathResponse.self, from: answer).windows } catch {
            throw ScenarioFailure("profile: the path child's answer is not a PathResponse: \(error)")
        }
    }
}
