import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Series: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A results folder's runs in commit order and every series over them (JSON), for scripts/history.",
            discussion: """
                Series: each design's paired ratio to its floor and latency p50 (timing: per-repetition \
                logs, the noise profile's drift), allocations per element (exact or timing) and \
                instructions per element (exact), with the gate's tolerance for the exact ones, and each \
                series' change points (`detection`: E-divisive means with a permutation test for timing, \
                a step beyond the tolerance for exact counts; the constants under `method`). Runs are \
                ordered by their commit's time where git knows it, else by createdAt.
                """
        )

        @Argument(help: "A results folder, e.g. results/<machine-id>/.")
        var folder: String

        @OptionGroup var noiseChoice: NoiseOption

        @OptionGroup var effect: MinEffectOption

        func run() throws {
            let choice: SeriesFile.Noise =
                noiseChoice.noNoise ? .none : noiseChoice.noise.map { .profile($0) } ?? .folderDefault
            print(try JSONOutput.string(SeriesFile.make(folder: folder, noise: choice, minEffect: effect.minEffect)))
        }
    }
}
