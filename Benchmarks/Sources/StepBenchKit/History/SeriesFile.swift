import Foundation
import StepBenchChangePoints

/// `stepbench history series`'s output (schema `stepbench-series/1`): a results folder's runs in history
/// order, the files left out, the noise profile used and every series, each with what its
/// numbers mean (exact or timing, tolerance, drift) and its change points (``ChangePoints``,
/// with the method's constants). scripts/history says what else changed at each and draws; it
/// decides nothing about what a number is or where it moved.
public struct SeriesFile: Codable, Equatable, Sendable {
    public static let currentSchema = "stepbench-series/1"

    public struct Run: Codable, Equatable, Sendable {
        public var file: String
        /// "results" (it has rows) or "profile".
        public var kind: String
        public var hasProfiles: Bool
        public var schema: String
        public var commit: String
        public var dirty: Bool
        public var createdAt: String
        public var commitTime: Double?
        /// "commit-time" or "createdAt": what placed the run in the history.
        public var orderedBy: String
        /// How the run measured beyond what a series' points say, as its file says it: what
        /// the history's causes compare between runs.
        public var settings: Settings
    }

    /// A run's settings the history compares (scripts/stepbench_report/history_cause.py's
    /// FILE_SETTINGS): the repetition budget and warm-up it ran with, the toolchain, allocator,
    /// build and kernel.
    public struct Settings: Codable, Equatable, Sendable {
        public var repetitionBudget: Double?
        public var warmup: Bool
        public var swiftVersion: String
        public var allocator: String
        public var buildConfiguration: String
        public var kernel: String

        init(_ file: ResultsFile) {
            repetitionBudget = file.configuration.repetitionBudget
            warmup = file.configuration.warmup
            swiftVersion = file.machine.swiftVersion
            allocator = file.machine.allocator
            buildConfiguration = file.machine.buildConfiguration
            kernel = file.machine.kernel
        }
    }

    /// Where the drift allowances come from.
    public enum Noise: Sendable, Equatable {
        /// The folder's noise.json when it exists.
        case folderDefault
        case profile(String)
        case none
    }

    public var schema = currentSchema
    public var folder: String
    public var machineId: String
    public var runs: [Run]
    public var skipped: [RunFolder.Skipped]
    /// The noise profile read (nil: none, so no timing series has a drift estimate).
    public var noiseProfile: String?
    /// The smallest timing change the history calls unless told otherwise (compare's).
    public var defaultMinEffect = Comparison.defaultMinEffect
    /// The smallest timing change this search called.
    public var minEffect = Comparison.defaultMinEffect
    /// The change-point search's constants.
    public var method = ChangePoints.Method()
    public var series: [HistorySeries]

    public static func make(
        folder path: String, noise: Noise, minEffect: Double = Comparison.defaultMinEffect
    ) throws -> SeriesFile {
        let folder = try Inputs.folder(path)
        var noisePath: String?
        switch noise {
        case .folderDefault: noisePath = Inputs.defaultNoiseProfile(besides: path).found
        case .profile(let p): noisePath = Inputs.noiseProfilePath(p)  // the file read, a folder's noise.json
        case .none: noisePath = nil
        }
        let profile = try noisePath.map { try readNoise($0) }
        let method = ChangePoints.Method()
        let series = HistorySeries.build(folder, noise: profile).map { s in
            var s = s
            s.detection = ChangePoints.detect(s, minEffect: minEffect, method: method)
            return s
        }
        return SeriesFile(
            folder: path, machineId: folder.machineId,
            runs: folder.runs.map { r in
                Run(
                    file: r.name, kind: r.file.kind == .profile ? "profile" : "results",
                    hasProfiles: !(r.file.profiles ?? []).isEmpty, schema: r.file.schema, commit: r.commit,
                    dirty: r.file.machine.gitDirty, createdAt: r.file.createdAt,
                    commitTime: r.commitTime, orderedBy: r.commitTime == nil ? "createdAt" : "commit-time",
                    settings: Settings(r.file))
            },
            skipped: folder.skipped, noiseProfile: noisePath, minEffect: minEffect, method: method, series: series)
    }

    /// A single-run noise profile: a history compares separate runs.
    static func readNoise(_ path: String) throws -> NoiseProfile {
        let profile = try Inputs.noiseProfile(path)
        if profile.method == .interleavedProcesses {
            throw ResultsError(
                .wrongKind,
                "\(path): a noise profile of the interleaved protocol (scripts/abtest); a history compares separate runs: use the single-run profile (noise.json)"
            )
        }
        return profile
    }
}
