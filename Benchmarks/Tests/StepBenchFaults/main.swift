// StepBenchFaults: stepbench with three deliberately broken designs beside the built-ins, for
// the tests of a run that a bad design cannot take down (scripts/tests/test_faults.py). Each is
// `atomic` with a fault planted at its subscriber's FAULT_AT-th input (default 5,000; the
// environment variable STEPBENCH_FAULT_AT sets it):
//   crashing      the stepper call traps (a crash at the n-th element)
//   hanging       the stepper call never returns
//   double-input  the input is delivered twice, the second while its promise is open
// And late-ahead: a design declared one input ahead (rule D2) whose request ahead comes 20 ms
// after it takes an input (LateAheadStrategy.swift), for the stale-promise path's driver.
// And one fault of the harness's own: with STEPBENCH_FAULTS_CRASH_AFTER_ANSWER=1, a measuring
// child (`child`) aborts as it exits, after its complete answer.
// Only public products: the way an outside package brings designs to the tool.
import Foundation
import StepBenchCLI
import Stepping
import Synchronization

enum Fault: Sendable { case crash, hang, doubleInput }

let faultAt = ProcessInfo.processInfo.environment["STEPBENCH_FAULT_AT"].flatMap { Int($0) } ?? 5_000

/// Counts one subscriber's inputs.
final class InputCount: Sendable {
    private let count = Atomic<Int>(0)
    func next() -> Int { count.add(1, ordering: .relaxed).newValue }
}

struct FaultyAtomic: SteppingSubscriberFactory {
    let fault: Fault

    func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        let inputs = InputCount()
        let fault = fault
        return SteppingDesign.atomic.makeSubscriber { (event: StepEvent<Input, Failure>) in
            guard case .input = event, inputs.next() == faultAt else { return stepper(event) }
            switch fault {
            case .crash: fatalError("StepBenchFaults: the planted crash at input \(faultAt)")
            case .hang: while true { sleep(3_600) }
            case .doubleInput:
                stepper(event)
                stepper(event)
            }
        }
    }
}

extension SteppingDesign {
    static let crashing = SteppingDesign(name: "crashing", factory: FaultyAtomic(fault: .crash))
    static let hanging = SteppingDesign(name: "hanging", factory: FaultyAtomic(fault: .hang))
    static let doubleInput = SteppingDesign(name: "double-input", factory: FaultyAtomic(fault: .doubleInput))
    static let lateAhead = SteppingDesign(
        name: "late-ahead",
        traits: .init(
            delivery: .onOwnExecutor, knownIssues: [.init(.d2, "asks for the next input 20 ms after it takes one")]),
        strategy: LateAheadStrategy(delay: 0.02))
}

if ProcessInfo.processInfo.environment["STEPBENCH_FAULTS_CRASH_AFTER_ANSWER"] == "1",
    CommandLine.arguments.dropFirst().first == "child"
{
    atexit { abort() }
}
StepBench.main(designs: [.crashing, .hanging, .doubleInput, .lateAhead])
