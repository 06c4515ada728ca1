import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// What `stepbench profile` asks of a child run under callgrind (`stepbench child`, a
/// ``ChildRequest`` on stdin): one repetition of a single-thread scenario with `elements`
/// elements, whose ``MeasuredWindow`` callgrind counts. The answer is the repetition, verified.
public struct ProfileRequest: Codable, Equatable, Sendable {
    /// What one profile row counts: a single-thread scenario, run by a design or, for a floor
    /// scenario, by the floor.
    public struct Target: Codable, Equatable, Sendable, CustomStringConvertible {
        public var scenario: ScenarioKind
        public var subject: Subject

        public init(_ scenario: ScenarioKind, _ subject: Subject) {
            self.scenario = scenario
            self.subject = subject
        }

        public var description: String { "\(scenario.rawValue) \(subject)" }
    }

    public var target: Target
    public var elements: Int

    public init(_ target: Target, elements: Int) {
        self.target = target
        self.elements = elements
    }

    /// Runs the repetition in this process (the child's side), as the timing pass would: the
    /// allocator installed and a thread started first (``ThreadedProcess``).
    public func run() throws -> RepetitionResult {
        let (scenario, subject) = (target.scenario, target.subject)
        guard scenario.isSingleThreaded(threads: 1), elements > 0, scenario.isFloor == (subject.design == nil) else {
            throw ScenarioFailure("profile: \(target) with \(elements) elements cannot be counted exactly")
        }
        AllocationCounter.install()
        ThreadedProcess.ensure()
        return try scenario.run(subject, threads: 1, elements: elements)
    }
}
