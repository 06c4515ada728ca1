import ArgumentParser
import Foundation
import StepBenchKit
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance

extension StepBench {
    /// A child process of the kit: a ``ChildRequest`` as JSON on stdin, its answer as JSON on
    /// stdout. Not for users (hidden).
    struct Child: ParsableCommand {
        /// Its name, which ``StepBench/mainWithExitCodes()`` answers before parsing anything.
        static let name = "child"

        static let configuration = CommandConfiguration(
            commandName: name, abstract: "A child process of stepbench (a JSON request on stdin).",
            shouldDisplay: false)

        /// How the kit starts a child of this binary: this command.
        static var process: ChildProcess { .this(arguments: [name]) }

        func run() throws {
            ChildGuard.dieWithParent()
            let input = FileHandle.standardInput.readDataToEndOfFile()
            let request: ChildRequest
            do { request = try JSONDecoder().decode(ChildRequest.self, from: input) } catch {
                throw Failure(description: "stepbench child: the request on stdin is not a ChildRequest: \(error)")
            }
            FileHandle.standardOutput.write(try request.answer())
        }
    }
}
