// Adapted from Rob Mayoff's answer to the Stack Overflow question "Swift Combine: Buffer
// upstream values and emit them at a steady rate?" (2019), licensed under CC BY-SA 4.0
// (https://creativecommons.org/licenses/by-sa/4.0/); this file is distributed under the same
// licence. Changes from the original: see NOTICE.

@preconcurrency import OpenCombine

extension Publisher {
    /// Republishes each input on `subject`, then waits `interval` on `scheduler` before
    /// asking upstream for the next one; forwards the completion. Built on ``step(design:with:)``.
    ///
    /// Upstream is asked for one element at a time, so put a `buffer` in front of an upstream
    /// that does not respect demand. The interval is measured from when an input is sent on
    /// `subject`, so consecutive outputs are at least `interval` apart.
    public func pace<S: Scheduler, Target: Subject>(
        _ interval: S.SchedulerTimeType.Stride,
        scheduler: S,
        subject: Target,
        design: SteppingDesign = .default
    ) -> AnyCancellable where Target.Output == Output, Target.Failure == Failure {
        step(design: design, with: makePaceStepper(interval, scheduler: scheduler, subject: subject))
    }
}

/// The stepper `pace` subscribes with (internal so tests can drive it through a subscriber
/// they hold, and wait for an asynchronous design between virtual-time steps).
func makePaceStepper<S: Scheduler, Target: Subject>(
    _ interval: S.SchedulerTimeType.Stride, scheduler: S, subject: Target
) -> @Sendable (StepEvent<Target.Output, Target.Failure>) -> Void {
    let context: any PaceStepper<Target.Output, Target.Failure> =
        PaceContext(interval: interval, scheduler: scheduler, subject: subject)
    return { event in context.handle(event) }
}

/// What the `pace` stepper needs: unchecked Sendable because the stepper is never called
/// concurrently with itself (rule S1), so the subject and scheduler are used by one event at a
/// time, from the thread the event arrives on, exactly as a caller would use them.
private final class PaceContext<S: Scheduler, Target: Subject>: PaceStepper, @unchecked Sendable {
    let interval: S.SchedulerTimeType.Stride
    let scheduler: S
    let subject: Target

    init(interval: S.SchedulerTimeType.Stride, scheduler: S, subject: Target) {
        self.interval = interval
        self.scheduler = scheduler
        self.subject = subject
    }

    typealias Input = Target.Output
    typealias Failure = Target.Failure

    func handle(_ event: StepEvent<Target.Output, Target.Failure>) {
        switch event {
        case .input(let input, let promise):
            subject.send(input)
            scheduler.schedule(after: scheduler.now.advanced(by: interval)) {
                promise(.more)
            }
        case .completion(let completion):
            subject.send(completion: completion)
        }
    }
}

/// The stepper side of `pace`, erased so that the `@Sendable` stepper closure captures no
/// scheduler or subject metatypes.
private protocol PaceStepper<Input, Failure>: Sendable {
    associatedtype Input
    associatedtype Failure: Error
    func handle(_ event: StepEvent<Input, Failure>)
}
