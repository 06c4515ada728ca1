import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    struct Machine: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print the machine kind: this machine's, or a results file's (the name of results/<machine-id>/ and Thresholds/<machine-id>/)."
        )

        @Argument(help: "A results file (default: this machine).")
        var results: String?

        func run() throws {
            print(
                try results.map { try Inputs.machine($0).machineID }
                    ?? MachineFingerprint.currentMachineID)
        }
    }
}
