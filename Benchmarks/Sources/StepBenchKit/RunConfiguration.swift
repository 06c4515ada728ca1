import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// What `stepbench run` measures. `validate()` rejects bad input before anything is measured.
/// Codable: a child process is handed one (``PassRequest``).
public struct RunConfiguration: Codable, Equatable, Sendable {
    public var designs: [SteppingDesign] = SteppingDesign.described
    public var scenarios: [ScenarioKind] = ScenarioKind.allCases
    public var threads: [Int] = [1, 2, 4]
    public var elements: Int? = nil
    public var repetitions: Int? = nil
    public var preset: Preset = .quick
    public var warmup = true
    public var allowDebug = false
    /// Seeds the order of combinations in each round (recorded in the results file, so a run's
    /// order can be replayed); nil: a fresh seed per run.
    public var orderSeed: UInt64? = nil
    /// A pass that only counts (allocations, contention) for a timing pass: each combination
    /// runs ``ScenarioKind/countingElements(_:)`` of the timing's elements.
    public var countsOnly = false
    /// Seconds one timed repetition may take before the combination is sized down (see
    /// ``Preset/repetitionBudget``); nil: the preset's, 0: no limit. An explicit `elements`
    /// is never sized.
    public var repetitionBudget: Double? = nil
    /// Every combination's elements as a timing pass sized them (``BenchmarkRunner/combinations``
    /// order), handed to the passes after it so that they count over the same elements (the
    /// counting passes over ``ScenarioKind/countingElements(_:)`` of these); nil: not sized yet.
    public var sizedElements: [Int]? = nil

    public init() {}

    public var effectiveRepetitions: Int { repetitions ?? preset.repetitions }

    /// The budget the combinations are sized to, if any: none for an explicit element count, or
    /// without a warm-up (it sizes them) unless they were sized already.
    public var effectiveRepetitionBudget: Double? {
        guard elements == nil, warmup || sizedElements != nil else { return nil }
        let budget = repetitionBudget ?? preset.repetitionBudget
        return budget.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Whether this run sizes its combinations at their warm-up: a timing run with a budget,
    /// not sized already.
    public var sizesAtWarmup: Bool { effectiveRepetitionBudget != nil && !countsOnly && sizedElements == nil }

    public func validate() throws {
        if let elements, elements <= 0 {
            throw ConfigurationError(.elements, "must be a positive number, got \(elements)")
        }
        if let repetitions, repetitions <= 0 {
            throw ConfigurationError(.repetitions, "must be a positive number, got \(repetitions)")
        }
        if let repetitionBudget, !(repetitionBudget >= 0) || !repetitionBudget.isFinite {
            throw ConfigurationError(
                .repetitionBudget, "must be 0 (no limit) or a positive number of seconds, got \(repetitionBudget)")
        }
        if MachineFingerprint.buildConfigurationOfThisBinary == "debug" && !allowDebug {
            throw ConfigurationError(
                .allowDebug,
                "needed to measure a debug build, whose numbers mean nothing: build with `swift build -c release`, or give it to measure anyway (the results are then marked debug)"
            )
        }
        if scenarios.contains(where: { !$0.isFloor }) && designs.isEmpty {
            throw ConfigurationError(.designs, "none selected")
        }
    }

    /// Checks the results can be written there, creating the folder: fails before measuring.
    public static func checkWritable(_ url: URL) throws {
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError(
                .output,
                "cannot create folder \(directory.path) (\(error.localizedDescription)); choose a writable path")
        }
        let probe = directory.appendingPathComponent(".stepbench-write-test-\(getpid())")
        guard FileManager.default.createFile(atPath: probe.path, contents: Data()) else {
            throw ConfigurationError(.output, "folder \(directory.path) is not writable; choose a writable path")
        }
        try? FileManager.default.removeItem(at: probe)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ConfigurationError(.output, "\(url.path) is a folder; give a file name ending in .json")
        }
    }
}

/// Bad input to a run: the setting at fault, what is wrong with it and what is valid. The
/// message does not say how the setting was given: a front end names it its own way (the
/// command line by its flag, before this message).
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    /// The settings of a run that can be wrong (``RunConfiguration``'s properties, and where the
    /// results go).
    public enum Setting: String, CaseIterable, Sendable {
        case designs, scenarios, threads, elements, repetitions, repetitionBudget, allowDebug, output
    }

    public var setting: Setting
    /// What is wrong and what is valid, without the setting's name.
    public var message: String

    public init(_ setting: Setting, _ message: String) {
        self.setting = setting
        self.message = message
    }

    public var description: String { "\(setting.rawValue): \(message)" }
}
