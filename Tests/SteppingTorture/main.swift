// SteppingTorture: one hostile case against one design, in its own process (the kit's
// TortureCase.childMain), so that a case that crashes or deadlocks a design cannot hide the
// others. The six designs' conformance tests run every case × design through it
// (TortureTests.childRunner).
//
//   SteppingTorture CASE DESIGN SECONDS   exit 0 held, 1 violations, 2 bad arguments,
//                                         3 watchdog fired after SECONDS; a signal: a crash
//   SteppingTorture --list                the case names, one per line
//
// The library's public API, and the kit's SPI for the relayed test designs.
import Foundation
import Stepping
@_spi(StepBench) import SteppingConformance
import TestSupport

// The relay's test designs are described here too, so a case can name them.
_ = SteppingDesign.relayedDesigns
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--list" {
    for c in TortureCase.allCases { print(c.rawValue) }
    exit(0)
}
TortureCase.childMain(arguments)
