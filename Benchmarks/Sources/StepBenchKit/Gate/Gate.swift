import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance

/// The CI gate's deterministic checks (`stepbench gate`), decided here so that the scripts
/// ask for a verdict and not for what to ask next: which build is measured how (``Plan``,
/// ``measure(_:plan:pieces:log:)``), and which package-benchmark thresholds are kept
/// (``ThresholdPolicy``).
public enum Gate {
    /// The designs whose single-thread allocation counts do not follow thread timing, in the
    /// order of `asked`: the gate's allocation runs measure these (its profile measures every design).
    public static func designs(among asked: [SteppingDesign]) -> [SteppingDesign] {
        asked.filter { ScenarioKind.answering(.perElement).allocationsAreExact(for: .design($0)) }
    }

    /// What the gate measures of one build: the profile (instructions of the profiled scenarios,
    /// every path's exact counts) of `profileDesigns`, and the allocation runs (1 and 2 threads,
    /// 3 repetitions, the suite's elements) of `runDesigns`.
    public struct Plan: Equatable, Sendable {
        public struct AllocationRun: Equatable, Sendable {
            public var elements: Int
            public var scenarios: [String]
            /// The designs whose count is exact in one of `scenarios` (their floors run anyway):
            /// a row the gate does not gate is not run (a peer's that crashes in a race of its
            /// own library cannot stop the gate).
            public var designs: [String]
        }
        public var profileScenarios: [String]
        public var profileDesigns: [String]
        public var runDesigns: [String]
        public var runs: [AllocationRun]

        /// The plan of `catalog` (the newer build's: the one that decides) for a build that knows
        /// the scenarios `known` (its own `stepbench list`; an older build knows fewer: the newer
        /// build's rows of the others are then only in its file, which compare reports as
        /// information), for the designs `only` (nil: all), in the catalog's order. Throws when
        /// `only` names a design the catalog does not have.
        public init(catalog: Catalog, known: Set<String>, only: [String]? = nil) throws {
            if let only, let unknown = only.first(where: { !catalog.designs.contains($0) }) {
                throw ResultsError(
                    .unknownName,
                    "gate: no design '\(unknown)' in this build's catalog; designs: \(catalog.designs.joined(separator: ", "))"
                )
            }
            let keep = { (names: [String]) in only.map { o in names.filter(o.contains) } ?? names }
            profileDesigns = keep(catalog.designs)
            let gated = keep(catalog.gateDesigns)
            runDesigns = gated
            profileScenarios = catalog.profiledScenarios.filter(known.contains)
            runs =
                gated.isEmpty
                ? []
                : catalog.gateRuns.compactMap { run in
                    let scenarios = run.scenarios.filter(known.contains)
                    let exact = Set(
                        catalog.scenarios.filter { scenarios.contains($0.name) }.flatMap(\.exactAllocations))
                    let designs = gated.filter(exact.contains)
                    return scenarios.isEmpty || designs.isEmpty
                        ? nil : AllocationRun(elements: run.elements, scenarios: scenarios, designs: designs)
                }
        }
    }

    /// One build to measure: its `stepbench` and the checkout it runs in (so that its files name
    /// its commit).
    public struct Build: Sendable {
        public var tool: URL
        public var tree: URL
        /// A name for its pieces and messages ("current", "base", a mutant's).
        public var name: String

        public init(tool: URL, tree: URL, name: String) {
            self.tool = tool
            self.tree = tree
            self.name = name
        }

        /// The scenarios this build's tool knows (`stepbench list --format json`).
        public func knownScenarios() throws -> Set<String> {
            let out = try launch(["list", "--format", "json"], what: "stepbench list")
            do {
                return Set(try JSONDecoder().decode(Catalog.self, from: out.stdout).scenarios.map(\.name))
            } catch {
                throw ResultsError(.toolFailed, "\(name): \(tool.path) list --format json is not a catalog (\(error))")
            }
        }

        /// Runs this build's tool with `arguments` in its tree; its outcome, or a ``ResultsError``
        /// that shows what it wrote when it exits otherwise than 0: `verificationFailed` for 3 (a
        /// scenario failed its verification, exit 3 as `run`), else `toolFailed`.
        @discardableResult
        func launch(_ arguments: [String], what: String) throws -> ChildLaunch.Outcome {
            let outcome: ChildLaunch.Outcome
            do {
                outcome = try ChildLaunch(executable: tool, arguments: arguments).run(directory: tree)
            } catch {
                throw ResultsError(.toolFailed, "\(name): cannot start \(tool.path) (\(error))")
            }
            guard outcome.succeeded else {
                let shown = [outcome.stdoutText, outcome.stderrText].filter { !$0.isEmpty }.joined(separator: "\n")
                let verification = outcome.reason == .exit && outcome.status == 3
                throw ResultsError(
                    verification ? .verificationFailed : .toolFailed,
                    "\(shown)\n\(what) failed (\(name), exit \(outcome.status))"
                        + (verification ? ": a scenario failed its verification" : ""))
            }
            return outcome
        }
    }

    /// Measures `build` as `plan` says into `output` (the profile and the allocation runs,
    /// combined by the build's own `stepbench merge --combine`), the pieces in `pieces`; returns
    /// the allocation runs' files (the malloc agreement reads them). `log` gets a line per step.
    @discardableResult
    public static func measure(
        _ build: Build, plan: Plan, output: URL, pieces: URL, log: (String) -> Void
    ) throws -> [URL] {
        let piece = { (suffix: String) in pieces.appendingPathComponent("\(build.name)-\(suffix).json").path }
        log("\(build.name): exact counts under callgrind (scenarios and paths)")
        let profile = piece("profile")
        try build.launch(
            [
                "profile", "--scenario", plan.profileScenarios.joined(separator: ","), "--design",
                plan.profileDesigns.joined(separator: ","), "--output", profile,
            ], what: "stepbench profile")
        log("\(build.name): allocations per element and verification")
        var runs: [String] = []
        for run in plan.runs {
            let file = piece("\(run.elements)")
            try build.launch(
                [
                    "run", "--scenario", run.scenarios.joined(separator: ","), "--design",
                    run.designs.joined(separator: ","), "--threads", "1,2", "--repetitions", "3", "--elements",
                    "\(run.elements)", "--output", file,
                ], what: "stepbench run")
            runs.append(file)
        }
        try build.launch(
            ["merge", "--combine"] + [profile] + runs + ["--output", output.path], what: "stepbench merge --combine")
        return runs.map { URL(fileURLWithPath: $0) }
    }
}
