import Foundation
import Stepping
import StepBenchScenarios

/// `stepbench profile`: exact instructions per element under valgrind's callgrind.
///
/// Each (scenario, design) runs twice in a child process — `stepbench run` with `low` and then
/// `high` elements, one repetition, no warm-up — on a copy of this binary stripped of debug
/// information (valgrind 3.19 cannot read Swift 6.3's). Instructions per element is the
/// difference of the two totals over the difference of the element counts, so the process's
/// start-up and the scenario's set-up cancel out. Counts are repeatable for the same binary
/// whatever else the machine is doing. Only single-thread scenarios are profiled: with more
/// threads the interleaving, and so the count, changes from run to run.
public struct Profiler {
    public static let scenarios: [ScenarioKind] = [.syncStep, .floorSync]

    public var valgrind = "valgrind"
    public var elementsLow = 4_000
    public var elementsHigh = 12_000
    public var progress: (String) -> Void = { _ in }

    public init() {}

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
                    throw ScenarioFailure("profile \(name): \(high.total) instructions for \(elementsHigh) elements, not more than \(low.total) for \(elementsLow)")
                }
                rows.append(.init(scenario: scenario, design: design?.rawValue ?? "floor", elementsLow: elementsLow,
                                  elementsHigh: elementsHigh, instructionsLow: low.total, instructionsHigh: high.total,
                                  instructionsPerElement: Double(high.total - low.total) / Double(elementsHigh - elementsLow),
                                  topFunctions: high.top))
            }
        }
        return rows
    }

    private func count(_ binary: URL, _ scenario: ScenarioKind, _ design: SteppingDesign?, _ elements: Int,
                       _ work: URL) throws -> (total: UInt64, top: [ResultsFile.FunctionCost]) {
        let out = work.appendingPathComponent("callgrind.\(scenario.rawValue).\(design?.rawValue ?? "floor").\(elements)")
        var arguments = ["--tool=callgrind", "--callgrind-out-file=\(out.path)", binary.path, "run",
                         "--scenario", scenario.rawValue, "--elements", String(elements), "--repetitions", "1",
                         "--no-warmup", "--threads", "1", "--output", work.appendingPathComponent("r.json").path]
        if let design { arguments += ["--design", design.rawValue] }
        if MachineFingerprint.buildConfigurationOfThisBinary == "debug" { arguments.append("--allow-debug") }
        try run(valgrind, arguments)
        let text = try String(contentsOf: out, encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("totals:") || $0.hasPrefix("summary:") }),
              let total = UInt64(line.split(separator: " ").last ?? "") else {
            throw ScenarioFailure("profile: no instruction total in \(out.lastPathComponent)")
        }
        let annotated = (try? run("callgrind_annotate", ["--inclusive=yes", out.path])) ?? ""
        var top: [ResultsFile.FunctionCost] = []
        for raw in annotated.split(separator: "\n") {
            // "12,345,678 (45.6%)  file:function [binary]"
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard let first = line.split(separator: " ").first, let n = UInt64(first.replacingOccurrences(of: ",", with: "")),
                  line.contains(":") else { continue }
            let function = line.split(separator: ":", maxSplits: 1).last.map { String($0).trimmingCharacters(in: .whitespaces) } ?? line
            if function.contains("PROGRAM TOTALS") || Self.isPlumbing(function) { continue }
            top.append(.init(function: demangle(String(function.split(separator: " [").first ?? Substring(function))),
                             inclusiveInstructions: n))
            if top.count == 10 { break }
        }
        return (total, top)
    }

    /// Start-up and thread plumbing frames that sit above everything and say nothing.
    static func isPlumbing(_ function: String) -> Bool {
        let f = function.trimmingCharacters(in: .whitespaces)
        return f.hasPrefix("0x") || f.hasPrefix("(below main)") || f.hasPrefix("__libc_start") || f.hasPrefix("stepbench_main")
            || f.hasPrefix("start_thread") || f.hasPrefix("_dispatch_") || f == "main" || f.hasPrefix("clone")
            || f.hasPrefix("$s10stepbench") || f.contains("ArgumentParser")
            // the harness itself (tool, runner, scenario drivers): show what the design costs
            || f.contains("12StepBenchCLI") || f.contains("12StepBenchKit")
    }

    private func demangle(_ symbol: String) -> String {
        guard symbol.hasPrefix("$s"), let out = try? run("swift-demangle", ["--simplified", symbol]) else { return symbol }
        var text = out.trimmingCharacters(in: .whitespacesAndNewlines)
        if let range = text.range(of: "---> ") { text = String(text[range.upperBound...]) }
        return text.count > 160 ? String(text.prefix(157)) + "..." : text
    }

    @discardableResult
    private func run(_ command: String, _ arguments: [String]) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["STEPBENCH_PROFILED_RUN"] = "1"
        let result: Subprocess.Result
        do { result = try Subprocess.run(command, arguments, environment: environment) } catch {
            throw ScenarioFailure("profile: cannot start \(command) (\(error)); install valgrind (apt-get install valgrind)")
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
        ResultsFile(schema: currentSchema, createdAt: ISO8601DateFormatter().string(from: Date()), machine: machine,
                    configuration: .init(profile: .quick, repetitions: 1, warmup: false, threads: [1],
                                         elementsOverride: elements, handoff: "none (callgrind, single thread)"),
                    rows: [], peakRSSBytes: ResourceUsage.now().peakRSSBytes, profiles: profiles)
    }
}
