import Foundation
import StepBenchScenarios

/// A results file, schema `stepbench/1` (documented in results/README.md).
public struct ResultsFile: Codable, Equatable, Sendable {
    public static let currentSchema = "stepbench/1"

    public var schema: String
    public var createdAt: String
    public var machine: MachineFingerprint
    public var configuration: Configuration
    public var rows: [Row]
    public var peakRSSBytes: UInt64
    /// Exact instruction counts from `stepbench profile` (callgrind); absent in timing runs.
    public var profiles: [ProfileRow]?

    /// Instructions per element of one (scenario, design): the difference of two callgrind runs
    /// of `elementsHigh` and `elementsLow` elements, so start-up and set-up cancel out.
    public struct ProfileRow: Codable, Equatable, Sendable {
        public var scenario: ScenarioKind
        public var design: String
        public var elementsLow: Int
        public var elementsHigh: Int
        public var instructionsLow: UInt64
        public var instructionsHigh: UInt64
        public var instructionsPerElement: Double
        /// The most expensive functions by inclusive instructions in the larger run.
        public var topFunctions: [FunctionCost]
    }

    public struct FunctionCost: Codable, Equatable, Sendable {
        public var function: String
        public var inclusiveInstructions: UInt64
    }

    public struct Configuration: Codable, Equatable, Sendable {
        public var profile: Profile
        public var repetitions: Int
        public var warmup: Bool
        public var threads: [Int]
        public var elementsOverride: Int?
        public var handoff: String
    }

    /// One (scenario, design, threads) combination: every repetition's raw values, and the
    /// summary computed from them.
    public struct Row: Codable, Equatable, Sendable {
        public var scenario: ScenarioKind
        /// The design's name, or "floor" for floor rows.
        public var design: String
        public var threads: Int
        public var elements: Int
        /// "ok", or "failed" (then `failure` says why and no summary is given).
        public var status: String
        public var failure: String?
        public var repetitions: [RepetitionResult]
        public var summary: Summary?
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
        /// Median ns/element over the `seed` design's, same scenario and threads.
        public var ratioToSeed: Double?
        /// Median ns/element over the floor row's (see `ScenarioKind.floor`).
        public var ratioToFloor: Double?
        /// Median p50 latency over the floor row's (async-step only).
        public var latencyP50RatioToFloor: Double?

        public init(_ reps: [RepetitionResult]) {
            nsPerElement = Estimate(reps.map(\.nsPerElement))
            elementsPerSecond = Estimate(reps.map(\.elementsPerSecond))
            allocationsPerElement = Estimate(reps.map(\.allocationsPerElement))
            cpuNsPerElement = Estimate(reps.map(\.cpuNsPerElement))
            let latencies = reps.compactMap(\.latency)
            if latencies.count == reps.count, !latencies.isEmpty {
                latencyP50 = Estimate(latencies.map { Double($0.p50) })
                latencyP90 = Estimate(latencies.map { Double($0.p90) })
                latencyP99 = Estimate(latencies.map { Double($0.p99) })
                latencyP999 = Estimate(latencies.map { Double($0.p999) })
                latencyMax = Estimate(latencies.map { Double($0.max) })
            }
        }
    }

    /// Fills in the ratios to `seed` and to the floor rows.
    public mutating func computeRatios() {
        func find(_ scenario: ScenarioKind, _ design: String, _ threads: Int) -> Summary? {
            rows.first { $0.scenario == scenario && $0.design == design && $0.threads == threads }?.summary
        }
        for i in rows.indices {
            guard var summary = rows[i].summary else { continue }
            let row = rows[i]
            if !row.scenario.isFloor, let seed = find(row.scenario, "seed", row.threads) {
                summary.ratioToSeed = summary.nsPerElement.median / seed.nsPerElement.median
            }
            if let floorKind = row.scenario.floor {
                let floorThreads = floorKind.threadCounts(requested: [row.threads]).first ?? 1
                if let floor = find(floorKind, "floor", floorThreads) {
                    // fan-out's floor is one pipeline per thread: compare per-thread cost.
                    let perThread = row.scenario == .fanOut ? Double(row.threads) : 1
                    summary.ratioToFloor = summary.nsPerElement.median * perThread / floor.nsPerElement.median
                    if let p50 = summary.latencyP50, let floorP50 = floor.latencyP50 {
                        summary.latencyP50RatioToFloor = p50.median / floorP50.median
                    }
                }
            }
            rows[i].summary = summary
        }
    }

    // MARK: reading and writing

    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        return e
    }

    /// Writes atomically: a temporary file beside `url`, then rename, so a reader never sees
    /// half a file and an interrupted run never destroys the previous one.
    public func write(to url: URL) throws {
        try Self.writeAtomically(try Self.encoder().encode(self), to: url)
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
        guard header.schema == currentSchema else {
            throw ResultsError("\(url.path): schema is \(header.schema.map { "'\($0)'" } ?? "missing"), expected '\(currentSchema)'; re-run `stepbench run` or use a matching stepbench version")
        }
        do { return try JSONDecoder().decode(ResultsFile.self, from: data) } catch {
            throw ResultsError("\(url.path): malformed \(currentSchema) file (\(error))")
        }
    }
}

/// A results file problem: names the file and what to do.
public struct ResultsError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
