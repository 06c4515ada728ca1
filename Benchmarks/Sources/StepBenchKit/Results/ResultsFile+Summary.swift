import Foundation
import StepBenchScenarios

extension ResultsFile {
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
}
