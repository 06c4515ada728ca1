import Foundation
import Stepping
import StepBenchScenarios

/// What `stepbench run` measures. `validate()` rejects bad input before anything is measured.
public struct RunConfiguration: Sendable {
    public var designs: [SteppingDesign] = SteppingDesign.allCases
    public var scenarios: [ScenarioKind] = ScenarioKind.allCases
    public var threads: [Int] = [1, 2, 4]
    public var elements: Int? = nil
    public var repetitions: Int? = nil
    public var profile: Profile = .quick
    public var warmup = true
    public var allowDebug = false
    /// Seeds the order of combinations in each round (recorded in the results file, so a run's
    /// order can be replayed); nil: a fresh seed per run.
    public var orderSeed: UInt64? = nil

    public init() {}

    public var effectiveRepetitions: Int { repetitions ?? profile.repetitions }

    /// Parses a comma-separated list of names against the valid ones; the error lists them.
    public static func parseList<T: RawRepresentable & CaseIterable>(_ text: String, of: T.Type, what: String) throws -> [T]
    where T.RawValue == String {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !names.isEmpty else {
            throw ConfigurationError("no \(what) given; valid \(what)s: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return try names.map { name in
            guard let value = T(rawValue: name) else {
                throw ConfigurationError("unknown \(what) '\(name)'; valid \(what)s: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return value
        }
    }

    /// Parses "1,2,4": positive integers only.
    public static func parseThreads(_ text: String) throws -> [Int] {
        let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !parts.isEmpty else { throw ConfigurationError("--threads needs a list such as 1,2,4") }
        return try parts.map { part in
            guard let n = Int(part), n > 0, n <= 256 else {
                throw ConfigurationError("--threads: '\(part)' is not a thread count (1…256); write e.g. 1,2,4")
            }
            return n
        }
    }

    public func validate() throws {
        if let elements, elements <= 0 {
            throw ConfigurationError("--elements must be a positive number, got \(elements)")
        }
        if let repetitions, repetitions <= 0 {
            throw ConfigurationError("--repetitions must be a positive number, got \(repetitions)")
        }
        if MachineFingerprint.buildConfigurationOfThisBinary == "debug" && !allowDebug {
            throw ConfigurationError("this is a debug build: its numbers mean nothing. Build with `swift build -c release` (scripts/bench does), or pass --allow-debug to measure anyway (the results are marked debug)")
        }
        if scenarios.contains(where: { !$0.isFloor }) && designs.isEmpty {
            throw ConfigurationError("no design selected")
        }
    }

    /// Checks the results can be written there, creating the folder: fails before measuring.
    public static func checkWritable(_ url: URL) throws {
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ConfigurationError("--output: cannot create folder \(directory.path) (\(error.localizedDescription)); choose a writable path")
        }
        let probe = directory.appendingPathComponent(".stepbench-write-test-\(getpid())")
        guard FileManager.default.createFile(atPath: probe.path, contents: Data()) else {
            throw ConfigurationError("--output: folder \(directory.path) is not writable; choose a writable path")
        }
        try? FileManager.default.removeItem(at: probe)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ConfigurationError("--output: \(url.path) is a folder; give a file name ending in .json")
        }
    }
}

/// Bad command-line input: says what is wrong and what is valid.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
