import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Calibrate: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .failure: "a demand is not met (the file is written either way), or bad input"
        ]
        static let configuration = CommandConfiguration(
            abstract:
                "Check the timing detector on noise profiles: synthetic A/A and A/B comparisons drawn from each profile's measured noise.",
            discussion: """
                Writes one calibration per profile (false alarms, the power curve of every decided row, \
                the demands not met). scripts/regress --update-baseline and scripts/abtest --update-noise \
                run it after writing a profile, into results/<machine-id>/calibration.json. \
                \(ExitStatus.sentence(exitStatuses))
                """
        )

        @Argument(
            help:
                "Noise profiles (stepbench noise's output, e.g. results/<machine-id>/noise.json; a folder: its noise.json)."
        )
        var profiles: [String]

        @Option(help: "Synthetic comparisons per question (A/A, and each planted slowdown of each row).")
        var trials = 1_000

        @Option(help: "Where to write the calibrations (JSON, written atomically).")
        var output: String?

        func validate() throws {
            guard !profiles.isEmpty else { throw ValidationError("give at least one noise profile") }
            guard trials >= 100 else {
                throw ValidationError("--trials \(trials): at least 100 (a 1% false-alarm rate needs them)")
            }
        }

        func run() throws {
            let calibrations = try profiles.map { path in
                try DetectorCalibration.run(Inputs.noiseProfile(path), name: path, trials: trials)
            }
            if let output {
                try DetectorCalibration.File(calibrations: calibrations).write(to: URL(fileURLWithPath: output))
            }
            print(calibrations.map(\.text).joined(separator: "\n"), terminator: "")
            let failed = calibrations.filter { !$0.passed }
            guard failed.isEmpty else {
                throw Failure(
                    description:
                        "the detector misses a demand on \(failed.map(\.profile).joined(separator: ", ")) (NOT MET above)"
                        + (output.map { "; written to \($0)" } ?? ""))
            }
            if let output { printError("calibration written to \(output)\n") }
        }
    }
}
