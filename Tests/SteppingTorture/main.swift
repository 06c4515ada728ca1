// stepping-torture: one hostile case against one design, in its own process, so that a case
// that crashes or deadlocks a design cannot hide the others (Tests/SteppingTests/TortureTests
// runs every case × design as a child process and reads the exit status).
//
//   SteppingTorture CASE DESIGN     exit 0: the design held every rule the case checks
//                                   exit 1: violations (one line each on stdout)
//                                   exit 3: the watchdog fired (deadlock or stall), naming
//                                           design, case and round
//                                   other / signal: the design crashed the process
//   SteppingTorture --list          the case names, one per line
//
// Only the public API is used: what a user of the library can do, a user's upstream can do.
import Foundation
@preconcurrency import OpenCombine
import Stepping

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--list" {
    for c in TortureCase.allCases { print(c.rawValue) }
    exit(0)
}
guard arguments.count == 2, let torture = TortureCase(rawValue: arguments.first!),
    let design = SteppingDesign(rawValue: arguments.last!)
else {
    FileHandle.standardError.write(
        Data(
            """
            usage: SteppingTorture CASE DESIGN
              cases: \(TortureCase.allCases.map(\.rawValue).joined(separator: ", "))
              designs: \(SteppingDesign.allCases.map(\.rawValue).joined(separator: ", "))

            """.utf8))
    exit(2)
}
let watchdogSeconds = Double(ProcessInfo.processInfo.environment["STEPBENCH_TORTURE_WATCHDOG"] ?? "") ?? 30
let progress = Progress(label: "\(design) \(torture.rawValue)")
progress.startWatchdog(seconds: watchdogSeconds)
let violations = torture.run(design, progress)
if violations.isEmpty {
    print("ok: \(design) \(torture.rawValue)")
    exit(0)
}
for v in violations.prefix(20) { print("VIOLATION: \(design) \(torture.rawValue): \(v)") }
exit(1)
