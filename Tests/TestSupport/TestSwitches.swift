import Foundation
@_spi(Measurement) import Stepping

/// Every environment variable that steers the tests, in one place and typed. Unset, each takes
/// the value CI runs with; a value that is not what its switch takes stops the run, naming it.
public enum TestSwitches {
    /// `STEPBENCH_STRESS_ROUNDS`: rounds of each stress test (default 150; scripts/test's
    /// ThreadSanitizer pass, ten times slower, runs 60).
    public static var stressRounds: Int { number("STEPBENCH_STRESS_ROUNDS", default: 150) }

    /// `STEPBENCH_S5_ELEMENTS`: elements of rule S5's stack-depth test (default 1,000,000; the
    /// ThreadSanitizer pass runs 100,000).
    public static var s5Elements: Int { number("STEPBENCH_S5_ELEMENTS", default: 1_000_000) }

    /// `STEPBENCH_MODEL_SEED`: the first seed of the model-based sequences (set it to re-run the
    /// seed a failure names).
    public static var modelSeed: UInt64 { UInt64(number("STEPBENCH_MODEL_SEED", default: 0x5EED_0000)) }

    /// `STEPBENCH_EXCLUDE_DESIGNS`: designs left out, comma-separated (local iteration only;
    /// scripts/test and CI never set it).
    public static var excludedDesigns: [SteppingDesign] {
        (value("STEPBENCH_EXCLUDE_DESIGNS") ?? "").split(separator: ",").map { raw in
            let name = raw.trimmingCharacters(in: .whitespaces)
            guard let design = SteppingDesign(rawValue: name) else {
                preconditionFailure(
                    "STEPBENCH_EXCLUDE_DESIGNS names unknown design '\(name)'; designs are \(SteppingDesign.allCases.map(\.rawValue))"
                )
            }
            return design
        }
    }

    // `STEPBENCH_TEST_SHARD` (`k/n`: the k-th of n shares of the heaviest parameterized tests'
    // cases) is read by the kit, ``Conformance/share(_:)``, which the known-bad designs' tests use
    // too (they see the kit's public API only).

    static func value(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }

    static func number(_ name: String, default fallback: Int) -> Int {
        guard let text = value(name) else { return fallback }
        guard let n = Int(text), n > 0 else { preconditionFailure("\(name)=\(text): expected a positive whole number") }
        return n
    }
}
