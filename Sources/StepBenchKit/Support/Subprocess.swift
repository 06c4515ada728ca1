import Foundation
import StepBenchScenarios
import Synchronization

/// Runs a command found on PATH and collects its output.
enum Subprocess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Throws only if the command cannot be started; a non-zero exit is in `status`.
    static func run(_ command: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read stderr on another thread so neither pipe can fill up and stall the child.
        let errors = Mutex<Data>(Data())
        let reader = Thread { errors.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !reader.isFinished { usleep(100) }
        return Result(
            status: process.terminationStatus, stdout: String(decoding: data, as: UTF8.self),
            stderr: String(decoding: errors.withLock { $0 }, as: UTF8.self))
    }
}
