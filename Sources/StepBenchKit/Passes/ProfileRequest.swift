import Foundation
import StepBenchScenarios
import Stepping

/// What `stepbench profile` asks of a child run under callgrind (`stepbench child`, a
/// ``ChildRequest`` on stdin): one repetition of a single-thread scenario with `elements`
/// elements, whose ``MeasuredWindow`` callgrind counts. The answer is the repetition, verified.
public struct ProfileRequest: Codable, Equatable, Sendable {
    public var scenario: ScenarioKind
    public var subject: Subject
    public var elements: Int

    public init(scenario: ScenarioKind, subject: Subject, elements: Int) {
        self.scenario = scenario
        self.subject = subject
        self.elements = elements
    }

    /// Runs the repetition in this process (the child's side), as the timing pass would: the
    /// allocator installed and a thread started first (``ThreadedProcess``).
    public func run() throws -> RepetitionResult {
        guard scenario.isSingleThreaded(threads: 1), elements > 0, scenario.isFloor == (subject.design == nil) else {
            throw ScenarioFailure(
                "profile: \(scenario.rawValue) of \(subject) with \(elements) elements cannot be counted exactly")
        }
        AllocationCounter.install()
        ThreadedProcess.ensure()
        return try scenario.run(design: subject.design, threads: 1, elements: elements)
    }
}
