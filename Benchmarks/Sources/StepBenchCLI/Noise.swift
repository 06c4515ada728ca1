import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    /// `stepbench noise`: a machine's timing noise, measured (default) and checked.
    struct Noise: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A machine's timing noise: measure a noise profile from A/A runs (default), or calibrate the detector on one.",
            subcommands: [NoiseMeasure.self, Calibrate.self],
            defaultSubcommand: NoiseMeasure.self)
    }

    struct NoiseMeasure: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "measure",
            abstract:
                "Measure this machine's timing noise from A/A runs (one build, one configuration, separate processes) into a noise profile for `compare --noise`.",
            discussion:
                "Give at least 3 results files. scripts/regress --update-baseline writes results/<machine-id>/noise.json this way."
        )

        @Argument(help: "Results files of A/A runs (at least 3).")
        var runs: [String]

        @Option(help: "Where to write the profile (JSON, written atomically).")
        var output: String

        @Option(
            help:
                "The runs are the processes of an interleaved A/A session (scripts/abtest --update-noise), N processes per side: profile the interleaved protocol instead of single runs."
        )
        var interleaved: Int?

        func run() throws {
            let files = try runs.map(Inputs.results)
            let profile =
                try interleaved.map { try NoiseProfile.measureInterleaved(processes: files, samplesPerSide: $0) }
                ?? NoiseProfile.measure(runs: files)
            try profile.write(to: URL(fileURLWithPath: output))
            print(
                "metric".padding(toLength: 44, withPad: " ", startingAt: 0) + "   reps  sampling σ  between σ   drift σ"
            )
            for e in profile.entries {
                let name = "\(e.row) \(e.metric.rawValue)"
                print(
                    name.padding(toLength: 44, withPad: " ", startingAt: 0)
                        + String(
                            format: " %6d  %9.2f%%  %8.2f%%  %7.2f%%", e.repetitions, 100 * e.samplingSD,
                            100 * e.betweenSD, 100 * e.driftSD))
            }
            print("noise profile of \(profile.machineId) from \(profile.runs) runs written to \(output)")
        }
    }
}
