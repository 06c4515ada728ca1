import ArgumentParser
import Foundation
import StepBenchKit
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// `--design`: designs of this build, comma-separated, checked against its catalog as they are
/// parsed (`run`, `profile`, `conform`). `ab --design` and `gate measure --design` name another
/// build's designs, which this build may not know.
struct DesignOption: ParsableArguments {
    @Option(help: "Comma-separated designs (default: all). See `stepbench list`.", transform: CommaSeparated.designs)
    var design: [SteppingDesign] = SteppingDesign.described
}

/// The designs and scenarios a measuring command selects (`run`, `profile`).
struct Selection: ParsableArguments {
    @OptionGroup var designs: DesignOption
    var design: [SteppingDesign] { designs.design }

    @Option(
        help: "Comma-separated scenarios (default: run: all, floors included; profile: the single-thread ones).",
        transform: CommaSeparated.scenarios)
    var scenario: [ScenarioKind]?
}

/// Where a measuring command writes its results file (`run`, `profile`).
struct Destination: ParsableArguments {
    @Option(help: "Results file (default: a time-stamped file and a latest copy in the results folder).")
    var output: String?

    @Option(help: "Folder of default results files: <folder>/<machine-id>/.")
    var resultsDirectory: String = "results"

    /// Checks, before anything is measured, that the results can be written.
    func checkWritable() throws {
        if let output {
            try RunConfiguration.checkWritable(URL(fileURLWithPath: output))
        } else {
            try RunConfiguration.checkWritable(
                URL(fileURLWithPath: resultsDirectory).appendingPathComponent("x/probe.json"))
        }
    }

    /// `--output`; or `<results>/<machine-id>/<prefix><time>.json` and its copy `<prefix>latest.json`.
    func urls(machineID: String, prefix: String = "") -> (main: URL, latest: URL?) {
        if let output { return (URL(fileURLWithPath: output), nil) }
        let folder = URL(fileURLWithPath: resultsDirectory).appendingPathComponent(machineID)
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        return (
            folder.appendingPathComponent("\(prefix)\(stamp).json"),
            folder.appendingPathComponent("\(prefix)latest.json")
        )
    }
}

/// `--min-effect`, one option for every command that decides a timing change (compare,
/// paired, series), parsed and checked once.
struct MinEffectOption: ParsableArguments {
    @Option(help: "Smallest timing change that counts, as a fraction (0.05 = 5%).")
    var minEffect: Double = Comparison.defaultMinEffect

    func validate() throws {
        guard minEffect > 0, minEffect < 10 else {
            throw ValidationError("--min-effect must be a positive fraction such as 0.05, got \(minEffect)")
        }
    }
}

/// `--noise FILE` (a folder: its noise.json) or `--no-noise`: the noise profile whose drift allowances widen each timing
/// interval, or none (compare, history series), parsed and checked once.
struct NoiseOption: ParsableArguments {
    @Option(
        help:
            "Noise profile of this machine kind (from `stepbench noise`; a folder: its noise.json): widens each timing interval by the between-run drift it measured. Default: compare: the noise.json beside the current file, else results/<machine-id>/noise.json (its machine kind) under the working directory; history: the folder's noise.json; when either exists. Timing rows the profile does not cover say no-drift-estimate instead of regression."
    )
    var noise: String?

    @Flag(help: "Use no noise profile, not even the default one: no timing change can then be called.")
    var noNoise = false

    func validate() throws {
        if noNoise && noise != nil { throw ValidationError("give --noise or --no-noise, not both") }
    }

    /// The flags given, as they were written (for a mode that takes neither).
    var given: [String] { [noise != nil ? "--noise" : nil, noNoise ? "--no-noise" : nil].compactMap { $0 } }
}

/// Writes `text` to stderr.
func printError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
}

/// What the commands check of the paths they are given, written once: a bad one is named by its
/// flag.
enum PathCheck {
    /// `path`, given as `flag`, is an executable (`what` it should be, for the message).
    static func executable(_ path: String, _ flag: String, what: String = "a stepbench") throws {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ValidationError("\(flag): \(path) is not an executable (\(what))")
        }
    }

    /// The folder `path`, given as `flag`, made if missing and writable.
    @discardableResult
    static func folder(_ path: String, _ flag: String) throws -> URL {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw ValidationError("\(flag): cannot make the folder \(path) (\(error.localizedDescription))")
        }
        guard FileManager.default.isWritableFile(atPath: path) else {
            throw ValidationError("\(flag): cannot write to \(path)")
        }
        return url
    }
}
