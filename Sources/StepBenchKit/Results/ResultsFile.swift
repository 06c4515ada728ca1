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

    /// Whether a row's scenario verified its own outcome (JSON: "ok", "failed").
    public enum Status: String, Codable, Sendable {
        case ok, failed
    }

    public struct Estimate: Codable, Equatable, Sendable {
        public var median: Double
        public var ciLow: Double
        public var ciHigh: Double

        public init(_ values: [Double]) {
            median = Statistics.median(values)
            (ciLow, ciHigh) = Statistics.bootstrapMedianCI(values)
        }
    }

    public struct Summary: Codable, Equatable, Sendable {
        public var nsPerElement: Estimate
        public var elementsPerSecond: Estimate
        public var allocationsPerElement: Estimate
        public var cpuNsPerElement: Estimate
        public var latencyP50: Estimate?
        public var latencyP90: Estimate?
        public var latencyP99: Estimate?
        public var latencyP999: Estimate?
        public var latencyMax: Estimate?
        /// fan-out: each pipeline's own ns per element (mean over pipelines), over repetitions.
        public var perThreadNsPerElement: Estimate?
        /// Median ns/element over the `seed` design's, same scenario and threads.
        public var ratioToSeed: Double?
        /// Median ns/element over the floor row's (see `ScenarioKind.floor`).
        public var ratioToFloor: Double?
        /// Median p50 latency over the floor row's (async-step only).
        public var latencyP50RatioToFloor: Double?
        /// The counts that explain a timing, per element, by metric name (``Metric``): the
        /// scenario's side count (stale calls, inputs per round), context switches, and the
        /// contention counters of a counting pass (medians over the repetitions that carry them).
        public var counts: [String: Double]?

        /// `side`: the metric of the repetitions' side events (``ScenarioKind/sideMetric``);
        /// `counted`: how many of `reps` carry their own contention counts (the rest repeat them).
        public init(_ reps: [RepetitionResult], side: Metric? = nil, counted: Int? = nil) {
            nsPerElement = Estimate(reps.map(\.nsPerElement))
            elementsPerSecond = Estimate(reps.map(\.elementsPerSecond))
            allocationsPerElement = Estimate(reps.map(\.allocationsPerElement))
            cpuNsPerElement = Estimate(reps.map(\.cpuNsPerElement))
            let perThread = reps.compactMap(\.perThreadNsPerElement)
            if perThread.count == reps.count, !perThread.isEmpty { perThreadNsPerElement = Estimate(perThread) }
            let latencies = reps.compactMap(\.latency)
            if latencies.count == reps.count, !latencies.isEmpty {
                latencyP50 = Estimate(latencies.map { Double($0.p50) })
                latencyP90 = Estimate(latencies.map { Double($0.p90) })
                latencyP99 = Estimate(latencies.map { Double($0.p99) })
                latencyP999 = Estimate(latencies.map { Double($0.p999) })
                latencyMax = Estimate(latencies.map { Double($0.max) })
            }
            var counts: [String: Double] = [:]
            func add(
                _ metric: Metric?, _ reps: ArraySlice<RepetitionResult>, _ perElement: (RepetitionResult) -> Double?
            ) {
                guard let metric, !reps.isEmpty else { return }
                let values = reps.compactMap(perElement)
                if values.count == reps.count { counts[metric.rawValue] = Statistics.median(values) }
            }
            func timed(_ count: UInt64?, _ r: RepetitionResult) -> Double? {
                count.map { Double($0) / Double(r.elements) }
            }
            let all = reps[...]
            add(side, all) { timed($0.sideEvents, $0) }
            add(.voluntarySwitchesPerElement, all) { timed($0.scheduling?.voluntarySwitches, $0) }
            add(.involuntarySwitchesPerElement, all) { timed($0.scheduling?.involuntarySwitches, $0) }
            for (metric, count) in Metric.contention {
                add(metric, reps.prefix(counted ?? 0)) { $0.contentionPerElement(count) }
            }
            self.counts = counts.isEmpty ? nil : counts
        }
    }

    /// Rows whose median beats their own floor's beyond both intervals: the floor does the same
    /// work minus the stepping subscriber, so that is a defect of the harness (or a floor of the
    /// wrong shape), not a fast design. Filled in by ``computeRatios()``; the tool prints them.
    public var harnessWarnings: [String]? = nil

    /// Fills in the ratios to `seed` and to the floor rows, and ``harnessWarnings``.
    public mutating func computeRatios() {
        var warnings: [String] = []
        defer { harnessWarnings = warnings.isEmpty ? nil : warnings }
        func find(_ scenario: ScenarioKind, _ design: Subject, _ threads: Int) -> Summary? {
            row(RowKey(scenario: scenario, design: design, threads: threads))?.summary
        }
        for i in rows.indices {
            rows[i].oversubscribed = machine.cores > 0 && rows[i].threads > machine.cores ? true : nil
            guard var summary = rows[i].summary else { continue }
            let row = rows[i]
            if !row.scenario.isFloor, let seed = find(row.scenario, .design(.seed), row.threads) {
                summary.ratioToSeed = summary.nsPerElement.median / seed.nsPerElement.median
            }
            if let floorKind = row.scenario.floor {
                let floorThreads = floorKind.threadCounts(requested: [row.threads]).first ?? 1
                if let floor = find(floorKind, .floor, floorThreads) {
                    summary.ratioToFloor = summary.nsPerElement.median / floor.nsPerElement.median
                    if let p50 = summary.latencyP50, let floorP50 = floor.latencyP50 {
                        summary.latencyP50RatioToFloor = p50.median / floorP50.median
                    }
                    if summary.nsPerElement.ciHigh < floor.nsPerElement.ciLow {
                        warnings.append(
                            String(
                                format:
                                    "%@ %@ ×%d: %.1f ns/element [%.1f, %.1f] beats its floor %@ at %.1f [%.1f, %.1f]: a harness defect",
                                row.scenario.rawValue, row.design.name, row.threads, summary.nsPerElement.median,
                                summary.nsPerElement.ciLow, summary.nsPerElement.ciHigh, floorKind.rawValue,
                                floor.nsPerElement.median, floor.nsPerElement.ciLow, floor.nsPerElement.ciHigh))
                    }
                }
            }
            rows[i].summary = summary
        }
    }

    // MARK: reading and writing

    /// Writes atomically: a temporary file beside `url`, then rename, so a reader never sees
    /// half a file and an interrupted run never destroys the previous one.
    public func write(to url: URL) throws {
        try Self.writeAtomically(try JSONOutput.encode(self), to: url)
    }

    /// Writes `data` to a temporary file beside `url`, then renames it into place.
    public static func writeAtomically(_ data: Data, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        try data.write(to: temporary)
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw ResultsError("cannot write \(url.path): \(reason)")
        }
    }

    /// Reads a results file, checking its schema.
    public static func read(_ url: URL) throws -> ResultsFile {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ResultsError("\(url.path): cannot read (\(error.localizedDescription))")
        }
        struct Header: Decodable { var schema: String? }
        guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw ResultsError("\(url.path): not a JSON results file")
        }
        guard let schema = header.schema, readableSchemas.contains(schema) else {
            throw ResultsError(
                "\(url.path): schema is \(header.schema.map { "'\($0)'" } ?? "missing"), expected \(readableSchemas.map { "'\($0)'" }.joined(separator: " or ")); re-run `stepbench run` or use a matching stepbench version"
            )
        }
        do { return try JSONDecoder().decode(ResultsFile.self, from: data) } catch {
            throw ResultsError("\(url.path): malformed \(currentSchema) file (\(error))")
        }
    }
}

extension ResultsFile.Configuration {
    enum CodingKeys: String, CodingKey {
        case preset, repetitions, warmup, threads, elementsOverride, handoff, orderSeed
        /// The preset's key in files written before it was called a preset.
        case profile
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        preset = try c.decodeIfPresent(Preset.self, forKey: .preset) ?? c.decode(Preset.self, forKey: .profile)
        repetitions = try c.decode(Int.self, forKey: .repetitions)
        warmup = try c.decode(Bool.self, forKey: .warmup)
        threads = try c.decode([Int].self, forKey: .threads)
        elementsOverride = try c.decodeIfPresent(Int.self, forKey: .elementsOverride)
        handoff = try c.decode(String.self, forKey: .handoff)
        orderSeed = try c.decodeIfPresent(UInt64.self, forKey: .orderSeed)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(preset, forKey: .preset)
        try c.encode(repetitions, forKey: .repetitions)
        try c.encode(warmup, forKey: .warmup)
        try c.encode(threads, forKey: .threads)
        try c.encodeIfPresent(elementsOverride, forKey: .elementsOverride)
        try c.encode(handoff, forKey: .handoff)
        try c.encodeIfPresent(orderSeed, forKey: .orderSeed)
    }
}

/// A results file problem: names the file and what to do.
public struct ResultsError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
