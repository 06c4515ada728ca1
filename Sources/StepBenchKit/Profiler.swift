import Foundation
import StepBenchScenarios
import Stepping

/// `stepbench profile`: exact instructions per element under valgrind's callgrind, and where
/// they go, function by function.
///
/// Each (scenario, design) runs twice in a child process — `stepbench run --pass timing` with
/// `low` and then `high` elements, one repetition, no warm-up, jemalloc's thread caches on as
/// in the timing pass — on a copy of this binary stripped of debug
/// information (valgrind 3.19 cannot read Swift 6.3's). Collection is on only inside the
/// scenario's ``MeasuredWindow`` (`--toggle-collect`), and Swift's hashing is made deterministic
/// (`SWIFT_DETERMINISTIC_HASHING=1`), so two profiles of one build count the same instructions.
/// Per element: the difference of the two windows' totals over the difference of their
/// elements, and the same per function (exclusive instructions, `callgrind_annotate`), so the
/// window's one-off work (first-use metadata, the subscription) cancels out. Only single-thread
/// scenarios are profiled: with more threads the interleaving, and so the count, varies.
/// The asynchronous designs (the actors) call the stepper on their own executor's thread, outside
/// the measuring thread's window, so for them collection is on in every thread for the whole
/// process (`collection` says which); the measuring thread parks meanwhile, and the difference
/// of the two runs still cancels start-up. Their counts are reproducible to a fraction of an
/// instruction per element here, but the CI gate does not rely on them (``Catalog/gateDesigns``).
public struct Profiler {
    public static let scenarios: [ScenarioKind] = [.syncStep, .floorSync]
    /// How many functions each profile row keeps (the rest is small).
    public static let functionsKept = 12

    public var valgrind = "valgrind"
    public var elementsLow = 4_000
    public var elementsHigh = 12_000
    public var progress: (String) -> Void = { _ in }

    public init() {}

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

    public func profile(scenarios: [ScenarioKind], designs: [SteppingDesign]) throws -> [ResultsFile.ProfileRow] {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("stepbench-profile-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let binary = work.appendingPathComponent("stepbench")
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        try FileManager.default.copyItem(at: me, to: binary)
        try run("strip", ["-g", binary.path])

        var rows: [ResultsFile.ProfileRow] = []
        for scenario in scenarios {
            let targets: [SteppingDesign?] = scenario.isFloor ? [nil] : designs
            for design in targets {
                let name = "\(scenario.rawValue) \(design?.rawValue ?? "floor")"
                progress("profiling \(name) (\(elementsLow) and \(elementsHigh) elements under callgrind)")
                let low = try count(binary, scenario, design, elementsLow, work)
                let high = try count(binary, scenario, design, elementsHigh, work)
                guard high.total > low.total else {
                    throw ScenarioFailure(
                        "profile \(name): \(high.total) instructions for \(elementsHigh) elements, not more than \(low.total) for \(elementsLow)"
                    )
                }
                let span = Double(elementsHigh - elementsLow)
                let perFunction = high.functions.map { function, cost in
                    (function, (Double(cost) - Double(low.functions[function] ?? 0)) / span)
                }
                let top = perFunction.filter { $0.1 >= 0.5 }
                    .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }  // ties by name: the same order every run
                    .prefix(Self.functionsKept)
                rows.append(
                    .init(
                        scenario: scenario, design: design?.rawValue ?? "floor", elementsLow: elementsLow,
                        elementsHigh: elementsHigh, instructionsLow: low.total, instructionsHigh: high.total,
                        instructionsPerElement: Double(high.total - low.total) / span,
                        topFunctions: top.map { .init(function: demangle($0.0), instructionsPerElement: $0.1) },
                        collection: Self.collection(design)))
            }
        }
        return rows
    }

    /// Where instructions are collected for `design` (see the type's comment).
    static func collection(_ design: SteppingDesign?) -> ResultsFile.ProfileRow.Collection {
        design?.deliversSynchronously == false ? .wholeProcess : .measuredWindow
    }

    /// One callgrind run: the window's (or the process's) total and its exclusive instructions
    /// per function.
    private func count(
        _ binary: URL, _ scenario: ScenarioKind, _ design: SteppingDesign?, _ elements: Int,
        _ work: URL
    ) throws -> (total: UInt64, functions: [String: UInt64]) {
        let out = work.appendingPathComponent(
            "callgrind.\(scenario.rawValue).\(design?.rawValue ?? "floor").\(elements)")
        var arguments = ["--tool=callgrind", "--callgrind-out-file=\(out.path)"]
        if Self.collection(design) == .measuredWindow { arguments.append("--toggle-collect=*MeasuredWindow*") }
        arguments += [
            binary.path, "run",
            "--scenario", scenario.rawValue, "--elements", String(elements), "--repetitions", "1",
            "--no-warmup", "--threads", "1", "--pass", "timing", "--order-seed", "1",
            "--output", work.appendingPathComponent("r.json").path,
        ]
        if let design { arguments += ["--design", design.rawValue] }
        if MachineFingerprint.buildConfigurationOfThisBinary == "debug" { arguments.append("--allow-debug") }
        try run(valgrind, arguments)
        let text = try String(contentsOf: out, encoding: .utf8)
        guard
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("totals:") || $0.hasPrefix("summary:") }
            ),
            let total = UInt64(line.split(separator: " ").last ?? "")
        else {
            throw ScenarioFailure("profile: no instruction total in \(out.lastPathComponent)")
        }
        let annotated = try run("callgrind_annotate", ["--inclusive=no", "--threshold=100", out.path])
        var functions: [String: UInt64] = [:]
        for raw in annotated.split(separator: "\n") {
            // "12,345 (45.6%)  file:function [binary]"
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard let first = line.split(separator: " ").first,
                let n = UInt64(first.replacingOccurrences(of: ",", with: "")),
                line.contains(":"), !line.contains("PROGRAM TOTALS")
            else { continue }
            let located = line.split(separator: ":", maxSplits: 1).last.map(String.init) ?? line
            let function = String(located.split(separator: " [").first ?? Substring(located)).trimmingCharacters(
                in: .whitespaces)
            functions[function, default: 0] += n
        }
        return (total, functions)
    }

    /// A readable name: Swift symbols demangled (simplified), every name cut to 120 characters.
    private func demangle(_ symbol: String) -> String {
        var text = symbol
        if symbol.hasPrefix("$s"), let out = try? run("swift-demangle", ["--simplified", symbol]) {
            text = out.trimmingCharacters(in: .whitespacesAndNewlines)
            if let range = text.range(of: "---> ") { text = String(text[range.upperBound...]) }
        }
        return text.count > 120 ? String(text.prefix(117)) + "..." : text
    }

    @discardableResult
    private func run(_ command: String, _ arguments: [String]) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["STEPBENCH_PROFILED_RUN"] = "1"
        environment["SWIFT_DETERMINISTIC_HASHING"] = "1"  // the same hash seeds, so the same instructions
        environment["MALLOC_CONF"] = "tcache:true"  // the allocator as users run it, as the timing pass does
        let result: Subprocess.Result
        do { result = try Subprocess.run(command, arguments, environment: environment) } catch {
            throw ScenarioFailure(
                "profile: cannot start \(command) (\(error)); install valgrind (apt-get install valgrind)")
        }
        guard result.status == 0 else {
            let tail = result.stderr.split(separator: "\n").suffix(3).joined(separator: " / ")
            throw ScenarioFailure("profile: \(command) exited \(result.status): \(tail)")
        }
        return result.stdout
    }
}

extension ResultsFile {
    /// A results file holding only `stepbench profile` rows.
    public static func profiled(_ profiles: [ProfileRow], machine: MachineFingerprint, elements: Int) -> ResultsFile {
        ResultsFile(
            schema: currentSchema, createdAt: ISO8601DateFormatter().string(from: Date()), machine: machine,
            configuration: .init(
                preset: .quick, repetitions: 1, warmup: false, threads: [1],
                elementsOverride: elements, handoff: "none (callgrind, single thread)"),
            rows: [], peakRSSBytes: ResourceUsage.now().peakRSSBytes, profiles: profiles,
            catalog: .current)
    }
}
