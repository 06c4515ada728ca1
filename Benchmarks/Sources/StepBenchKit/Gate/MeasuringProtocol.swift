import StepBenchScenarios
@_spi(Measurement) import Stepping

/// A run the scripts make the same way every time, named so that they ask the tool for it
/// (`stepbench run --protocol NAME`) instead of asking it for its pieces and putting them
/// together: the scenarios, the designs among those asked for, and what a protocol fixes of
/// threads, elements and preset. The catalog's `timingScenarios`, `timingElements` and
/// `abtestScenarios` are read from here.
public enum MeasuringProtocol: String, CaseIterable, Sendable {
    /// The timing comparison of the gate (information only) and of the noise profiles: one design
    /// and the floor it is paired with, at the suite's elements, for the designs whose single-thread
    /// counts are exact (the gate's designs).
    case timing
    /// The contended protocol of an interleaved A/B (`stepbench abtest`): every scenario whose
    /// primary metric a design's synchronisation moves, each with its floor, at 2 threads (no
    /// more than a two-core machine has), at the suite's elements (`--preset brief`).
    case abtest

    public var scenarios: [ScenarioKind] {
        switch self {
        case .timing: ScenarioKind.with(.perElement).flatMap { [$0, $0.floor!] }
        case .abtest: ScenarioKind.with(.abtest).flatMap { [$0, $0.floor!] }
        }
    }

    /// The designs of `asked` this protocol measures, in their order.
    public func designs(among asked: [SteppingDesign]) -> [SteppingDesign] {
        switch self {
        case .timing: Gate.designs(among: asked)
        case .abtest: asked
        }
    }

    /// The thread counts it fixes (nil: the run's own).
    public var threads: [Int]? {
        switch self {
        case .timing: nil
        case .abtest: [2]
        }
    }

    /// The elements per repetition it fixes (nil: the preset's).
    public var elements: Int? {
        switch self {
        case .timing: ScenarioKind.answering(.perElement).suiteElements
        case .abtest: nil
        }
    }

    /// The preset it fixes (nil: the run's own).
    public var preset: Preset? {
        switch self {
        case .timing: nil
        case .abtest: .brief
        }
    }
}

extension MeasuringProtocol {
    /// The `stepbench run` arguments that make this protocol spelt out, for `designs` (nil: the
    /// protocol's own among all): what an older build, which has no `--protocol`, is given.
    public func runArguments(designs: [SteppingDesign]? = nil) -> [String] {
        var arguments = ["--scenario", scenarios.map(\.rawValue).joined(separator: ",")]
        let chosen = self.designs(among: designs ?? SteppingDesign.described)
        if designs != nil || chosen != SteppingDesign.described {
            arguments += ["--design", chosen.map(\.rawValue).joined(separator: ",")]
        }
        if let threads { arguments += ["--threads", threads.map(String.init).joined(separator: ",")] }
        if let elements { arguments += ["--elements", "\(elements)"] }
        if let preset { arguments += ["--preset", preset.rawValue] }
        return arguments
    }
}
