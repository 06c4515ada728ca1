import Stepping

extension Conformance {
    /// The torture cases as checks of the rule each is about, run in the calling process.
    /// (`SteppingTorture` runs the same cases one per child process, so that a crash cannot hide
    /// the others; here a crash ends the process, a stall is abandoned.)
    static let tortureChecks: [Check] = TortureCase.allCases.map { torture in
        Check(torture.rule, torture.rawValue, torture.summary) { design in
            for violation in torture.run(design, TortureProgress(label: "\(design) \(torture.rawValue)")) {
                expect(false, violation)
            }
        }
    }
}
