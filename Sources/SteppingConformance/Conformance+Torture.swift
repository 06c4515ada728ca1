import Foundation
@_spi(Measurement) import Stepping

extension Conformance {
    /// The torture cases as checks of the rule each is about, each run by the configuration's
    /// ``Configuration/runTorture`` (in the calling process unless told otherwise).
    static let tortureChecks: [Check] = TortureCase.allCases.map { torture in
        Check(torture.rule, torture.rawValue, torture.summary, torture: torture) { design in
            for violation in configuration.runTorture(torture, design, stallLimit) {
                expect(false, violation)
            }
        }
    }
}

extension TortureCase {
    /// Runs the case on `design` in this process. A stall longer than `seconds` is left to the
    /// kit's own limit (the check is abandoned); a crash ends the process.
    @Sendable
    public static func runInProcess(_ torture: TortureCase, on design: SteppingDesign, seconds: Double) -> [String] {
        torture.run(design, TortureProgress(label: "\(design) \(torture.rawValue)"))
    }
}
