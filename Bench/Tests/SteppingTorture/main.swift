// stepping-torture: one hostile case against one design, in its own process, so that a case
// that crashes or deadlocks a design cannot hide the others (the six designs' conformance tests
// run every case × design as a child process through TortureTests.childRunner, which reads the
// exit status).
//
//   SteppingTorture CASE DESIGN [WATCHDOG]
//                                   WATCHDOG: seconds before a stall fails the case (default 30)
//                                   exit 0: the design held every rule the case checks
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
import SteppingConformance

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--list" {
    for c in TortureCase.allCases { print(c.rawValue) }
    exit(0)
}
let given = Array(arguments)
guard (2...3).contains(given.count), let torture = TortureCase(rawValue: given[0]),
    let design = SteppingDesign(rawValue: given[1]),
    let watchdogSeconds = given.count == 3 ? Double(given[2]) : 30
else {
    FileHandle.standardError.write(
        Data(
            """
            usage: SteppingTorture CASE DESIGN [WATCHDOG-SECONDS]
              cases: \(TortureCase.allCases.map(\.rawValue).joined(separator: ", "))
              designs: \(SteppingDesign.allCases.map(\.rawValue).joined(separator: ", "))

            """.utf8))
    exit(2)
}
let progress = TortureProgress(label: "\(design) \(torture.rawValue)")
progress.startWatchdog(seconds: watchdogSeconds)
let violations = torture.run(design, progress)
if violations.isEmpty {
    print("ok: \(design) \(torture.rawValue)")
    exit(0)
}
for v in violations.prefix(20) { print("VIOLATION: \(design) \(torture.rawValue): \(v)") }
exit(1)
