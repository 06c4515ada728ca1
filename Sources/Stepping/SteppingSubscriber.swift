@preconcurrency import OpenCombine

/// What a stepper asks for when it fulfils a ``StepPromise``.
public enum StepRequest: Sendable, Equatable {
    /// Deliver the next input: the subscriber asks upstream for `.max(1)`.
    case more
    /// Stop: the subscriber cancels upstream once and calls the stepper no more.
    case cancel
}

/// The right to ask for the next input, handed to the stepper with each input.
///
/// Guarantees: only the promise of the current input acts, and it acts once. Later calls of
/// the same promise, calls of an older promise, and calls after completion or cancellation do
/// nothing. May be called from any thread, including synchronously from inside the stepper.
/// Cost: a value type (a reference and an id for every design but `seed`, whose promise is a
/// heap-allocated closure, as in the original); calling it costs one synchronised transition.
public struct StepPromise: Sendable {
    @usableFromInline
    enum Storage: Sendable {
        case target(any StepPromiseTarget, StepStateMachine.PromiseID)
        case closure(@Sendable (StepRequest) -> Void)
    }

    @usableFromInline
    let storage: Storage

    @usableFromInline
    init(target: any StepPromiseTarget, id: StepStateMachine.PromiseID) {
        storage = .target(target, id)
    }

    @usableFromInline
    init(closure: @escaping @Sendable (StepRequest) -> Void) {
        storage = .closure(closure)
    }

    /// Fulfils the promise with `request`. See the type's guarantees.
    @inlinable
    public func callAsFunction(_ request: StepRequest) {
        switch storage {
        case .target(let target, let id):
            target.completePromise(id: id, request: request)
        case .closure(let body):
            body(request)
        }
    }
}

/// A subscriber that a ``StepPromise`` reports to. Implemented by every design but `seed`.
@usableFromInline
protocol StepPromiseTarget: AnyObject, Sendable {
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest)
}

/// What a stepper is called with: one input and the promise for the next, or the completion.
public enum StepEvent<Input, Failure: Error> {
    /// An input from upstream. No further input arrives until `promise(.more)`.
    case input(Input, StepPromise)
    /// Upstream finished or failed. Delivered exactly once, and it is the last event.
    case completion(Subscribers.Completion<Failure>)
}

/// A subscriber that asks upstream for one element at a time and hands each to a stepper.
///
/// Every design in ``SteppingDesign`` conforms and obeys the same rules (CONFORMANCE.md):
/// demand is `.max(1)` at a time and never more than one outstanding; the stepper is called
/// with inputs in upstream order, one at a time, never while the previous promise is
/// unfulfilled; completion reaches the stepper exactly once; `cancel()` may be called from any
/// thread, any number of times. No design holds a lock of its own across a call to the
/// stepper, `request` or `cancel` (the actors' mailbox lock covers one push or pop). After
/// completion or cancel the stepper and subscription are released. The faithful port of the
/// original, `seed`, keeps the original's flaws (CONFORMANCE.md, "What the original gets wrong").
public protocol SteppingSubscriber<Input, Failure>: Subscriber, Cancellable, AnyObject {
    associatedtype Input
    associatedtype Failure  // `: Error`, from `Subscriber`
    /// Creates a subscriber that calls `stepper` for each input and for the completion.
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void)
}
