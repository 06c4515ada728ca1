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

    /// Throws only if the command cannot be started; a non-zero exit is in `status`. `input` is
    /// written to the command's standard input (closed at once when nil).
    static func run(
        _ command: String, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        // A bench child (`stepbench child` under callgrind) dies with this process (ChildGuard).
        process.environment = (environment ?? ProcessInfo.processInfo.environment).merging(ChildGuard.environment) {
            $1
        }
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        // Small requests (a pipe buffer holds 64 KiB), written before the output is read.
        if let input { stdin.fileHandleForWriting.write(input) }
        try? stdin.fileHandleForWriting.close()
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
