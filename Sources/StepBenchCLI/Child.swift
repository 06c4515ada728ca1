import ArgumentParser
import Foundation
import StepBenchKit

extension StepBench {
    /// The path profiler's child process: a ``PathRequest`` as JSON on stdin, the
    /// ``PathResponse`` as JSON on stdout. Not for users (hidden).
    struct Child: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The path profiler's child process (a JSON request on stdin).", shouldDisplay: false)

        func run() throws {
            let input = FileHandle.standardInput.readDataToEndOfFile()
            let request: PathRequest
            do { request = try JSONDecoder().decode(PathRequest.self, from: input) } catch {
                throw Failure(description: "stepbench child: the request on stdin is not a PathRequest: \(error)")
            }
            let response = try request.run()
            FileHandle.standardOutput.write(try JSONEncoder().encode(response))
        }
    }
}
