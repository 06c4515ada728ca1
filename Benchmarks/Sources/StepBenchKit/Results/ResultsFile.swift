import Foundation
import StepBenchScenarios

/// A results file, schema `stepbench/2` (documented in results/README.md); files of schema
/// `stepbench/1` are still read.
public struct ResultsFile: Codable, Equatable, Sendable {
    public static let currentSchema = "stepbench/2"
    /// Schemas this version reads: /2 only added fields to /1 and changed what a profile row's
    /// functions mean (exclusive per element instead of inclusive per run; both are optional).
    public static let readableSchemas = ["stepbench/2", "stepbench/1"]

    public var schema: String
    public var createdAt: String
    public var machine: MachineFingerprint
    public var configuration: Configuration
    public var rows: [Row]
    public var peakRSSBytes: UInt64
    /// Exact instruction counts from `stepbench profile` (callgrind); absent in timing runs.
    public var profiles: [ProfileRow]?
    /// Exact counts per event of each path of each design (`stepbench profile`); absent in
    /// timing runs and older files.
    public var paths: [PathRow]? = nil
    /// Set by `stepbench merge`: each repetition is then one whole process (its medians), e.g.
    /// "per-process medians of 20 runs". Absent in a file written by `stepbench run`.
    public var aggregation: String? = nil
    /// What the tool knew when it wrote this file (`stepbench list --format json`): the designs in
    /// order, which deliver asynchronously, each scenario's floor. The report and `scripts/history`
    /// read floors and order from here, so they name none themselves. Absent in older files.
    public var catalog: Catalog? = nil
    /// Each design's instructions per event over the floor, split into the API's part and its
    /// synchronisation's (``CostSplit``; `stepbench profile` with floor-step). Absent elsewhere.
    public var costSplits: [CostSplit]? = nil

    /// Rows whose median beats their own floor's beyond both intervals: the floor does the same
    /// work minus the stepping subscriber, so that is a defect of the harness (or a floor of the
    /// wrong shape), not a fast design. Filled in by ``computeRatios()``; the tool prints them.
    public var harnessWarnings: [String]? = nil
    /// The targets of `stepbench profile` whose child crashed or hung (its watchdog,
    /// `--watchdog`): their rows are missing from ``profiles`` and ``paths``, the profile went on
    /// without them. Absent when none did (and in timing runs and older files).
    public var profileFaults: [ProfileFault]? = nil
    /// What else ran while the run timed (``Quietness``; `stepbench run`). Absent in other
    /// files and older runs.
    public var quietness: Quietness? = nil
    /// The rounds `stepbench run --decide` added to the questions its first pass left open
    /// (``Deciding``), in order. Absent when it added none.
    public var addedRounds: [AddedRounds]? = nil
    /// Which document this is, as its writer said (JSON `kind`); files written before it was
    /// kept have none, and ``kind`` converts them on read.
    public var declaredKind: Kind? = nil

    /// Which document a results file is. Every writer says it (``declaredKind``); nothing tells
    /// it from which fields are empty, but for files written before it was kept.
    public enum Kind: String, Codable, CaseIterable, Sendable {
        /// `stepbench run` (and a measuring child's answer): rows of timed repetitions.
        case run
        /// `stepbench profile`: exact counts (``profiles``, ``paths``), no rows.
        case profile
        /// `stepbench merge` (and `stepbench run --fork`, whose timing rounds are processes): runs
        /// merged per process (``aggregation`` says how).
        case merged
        /// `stepbench merge --combine`: files that measured different things, side by side (a
        /// run and its profile: the gate's baseline, what `show document` reads).
        case combination
    }

    /// Which document this is: its ``declaredKind``, or for a file written before that was kept,
    /// what its writer made (the one conversion on read): merged when it has an aggregation, a
    /// profile when it has no rows, a combination when it has rows and exact counts, else a run.
    public var kind: Kind {
        if let declaredKind { return declaredKind }
        if aggregation != nil { return .merged }
        if rows.isEmpty { return .profile }
        return (profiles ?? []).isEmpty && (paths ?? []).isEmpty ? .run : .combination
    }

    enum CodingKeys: String, CodingKey {
        case schema, createdAt, machine, configuration, rows, peakRSSBytes, profiles, paths, aggregation, catalog
        case costSplits, harnessWarnings, profileFaults, quietness, addedRounds
        case declaredKind = "kind"
    }

    /// A target of `stepbench profile` whose child crashed or hung: a scenario (``profiles``'
    /// rows) or the paths of one subject (``paths``' rows).
    public struct ProfileFault: Codable, Equatable, Sendable {
        /// The scenario profiled, or nil for the subject's paths.
        public var scenario: ScenarioKind?
        public var design: Subject
        /// `.crashed` or `.hung`.
        public var status: Status
        public var failure: String

        public init(scenario: ScenarioKind?, design: Subject, status: Status, failure: String) {
            self.scenario = scenario
            self.design = design
            self.status = status
            self.failure = failure
        }

        /// The fault of `target`'s child (a hang: past `stepbench profile --watchdog`).
        public init(scenario: ScenarioKind?, design: Subject, _ fault: ChildFault) {
            self.init(
                scenario: scenario, design: design, status: fault.status,
                failure: fault.status == .hung ? "\(fault.what) (--watchdog)" : fault.what)
        }

        /// "sync-step atomic", "the paths of atomic".
        public var target: String { scenario.map { "\($0.rawValue) \(design)" } ?? "the paths of \(design)" }
    }

    /// Instructions per element of one (scenario, design): the difference of two callgrind runs
    /// of `elementsHigh` and `elementsLow` elements, so start-up and set-up cancel out.
    public struct ProfileRow: Codable, Equatable, Sendable {
        public var scenario: ScenarioKind
        /// The design, or the floor for a floor scenario's profile.
        public var design: Subject
        public var elementsLow: Int
        public var elementsHigh: Int
        public var instructionsLow: UInt64
        public var instructionsHigh: UInt64
        public var instructionsPerElement: Double
        /// Where the instructions of one element go: per function, exclusive instructions per
        /// element (the difference of the two windows' counts over the difference of their
        /// elements), most expensive first. (Files of schema stepbench/1 held the inclusive
        /// instructions of the larger run's whole process instead.)
        public var topFunctions: [FunctionCost]
        /// Where instructions were counted; absent in older files (always the measured window).
        public var collection: Collection? = nil
        /// The whole profile of an element: every function, call edge and runtime call;
        /// absent in files written before it was kept.
        public var callProfile: CallProfile? = nil

        public enum Collection: String, Codable, Sendable {
            /// Inside the scenario's ``MeasuredWindow``: every thread between its open and close
            /// (files written before the window's edges were client requests: the measuring
            /// thread only).
            case measuredWindow
            /// Every thread, the whole process (older files' asynchronous designs).
            case wholeProcess
        }
    }

    /// Exact counts per event of one (path, design), from the difference of two windows of
    /// `eventsLow` and `eventsHigh` events (``PathProfiler``).
    public struct PathRow: Codable, Equatable, Sendable {
        public var path: StepPath
        /// What was driven: the floor, floor-step or a design.
        public var design: Subject
        public var eventsLow: Int
        public var eventsHigh: Int
        /// Callgrind, every thread inside the driver's window.
        public var instructionsPerEvent: Double
        /// Of those, the synchronising ones: `lock`-prefixed read-modify-writes, `xchg` with
        /// memory, `mfence` (``SynchronisingInstructions``).
        public var synchronisingPerEvent: Double
        /// jemalloc with its thread caches off, the same driver outside valgrind.
        public var allocationsPerEvent: Double
        /// Exclusive instructions per event by function, most expensive first.
        public var topFunctions: [FunctionCost]
        /// The synchronising instructions per event by function, most first.
        public var synchronisingFunctions: [FunctionCost]
        /// Whether the counts are fixed by the code (``StepPath/countsAreExact(for:)``):
        /// `compare` gates only those.
        public var exact: Bool
        /// The whole profile of an event: every function, call edge and runtime call; absent
        /// in files written before it was kept.
        public var callProfile: CallProfile? = nil
    }

    public struct FunctionCost: Codable, Equatable, Sendable {
        public var function: String
        /// Exclusive instructions per element (stepbench/2).
        public var instructionsPerElement: Double?
        /// Inclusive instructions of a whole run (stepbench/1 files only).
        public var inclusiveInstructions: UInt64?

        public init(function: String, instructionsPerElement: Double) {
            self.function = function
            self.instructionsPerElement = instructionsPerElement
        }
    }

    public struct Configuration: Codable, Equatable, Sendable {
        /// How much was measured. Written as `preset`; files written before the option was
        /// renamed say `profile`, which is read too.
        public var preset: Preset
        public var repetitions: Int
        public var warmup: Bool
        public var threads: [Int]
        public var elementsOverride: Int?
        public var handoff: String
        /// The seed of each round's shuffled order (stepbench/2; `stepbench run --order-seed`).
        public var orderSeed: UInt64? = nil
        /// Seconds a repetition might take before its combination was sized down at its warm-up
        /// (``RunConfiguration/repetitionBudget``); a sized row's `elements` says what it ran.
        /// nil: nothing was sized (older files, explicit elements, counting passes).
        public var repetitionBudget: Double? = nil
    }

    /// One (scenario, design, threads) combination: every repetition's raw values, and the
    /// summary computed from them.
    public struct Row: Codable, Equatable, Sendable {
        public var scenario: ScenarioKind
        /// The design, or the floor for a floor scenario's rows (written as its name, "floor").
        public var design: Subject
        public var threads: Int
        public var elements: Int
        /// Whether the row verified; `.failed`: `failure` says why and no summary is given.
        public var status: Status
        public var failure: String?
        public var repetitions: [RepetitionResult]
        public var summary: Summary?
        /// Whether this row's allocation count is fixed by the code (stepbench/2; from
        /// `ScenarioKind.allocationsAreExact`): compare holds it exactly, else like a timing.
        public var allocationsExact: Bool? = nil
        /// How many of `repetitions` carry their own allocation count (stepbench/2, two passes:
        /// the allocation pass's repetitions, reused cyclically by the rest); nil: all of them.
        public var allocationRepetitions: Int? = nil
        /// How many of `repetitions` carry their own contention counts (from a counting build's
        /// pass, reused cyclically by the rest); nil: none was counted.
        public var contentionRepetitions: Int? = nil
        /// More threads than the machine has cores (set by ``ResultsFile/computeRatios()``):
        /// spinning threads then wait for the scheduler; shown, never decided.
        public var oversubscribed: Bool? = nil
    }

    /// Whether a row verified its own outcome (JSON: "ok", "failed"), or what stopped it.
    public enum Status: String, Codable, Sendable {
        case ok, failed
        /// The design took its measuring process down (a signal, or an exit of its own) while
        /// this row ran; the run went on without the row in a new process.
        case crashed
        /// The row made no progress for the watchdog's time (`stepbench run --watchdog`); the
        /// process was killed and the run went on without the row.
        case hung
        /// Not run: the design declares broken a rule the scenario needs
        /// (``ScenarioKind/exclusion(of:)``); `failure` says which and why.
        case excluded

        /// A fault of the process rather than a failed verification.
        public var isFault: Bool { self == .crashed || self == .hung }
    }
}
