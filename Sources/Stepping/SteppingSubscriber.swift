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
/// Cost: a value type (a reference and an id for every built-in design but `seed`, whose promise
/// is a heap-allocated closure, as in the original); calling it costs one synchronised transition.
///
/// A design makes one promise per input, in either of two ways: a value promise,
/// ``init(target:id:)``, a reference to the subscriber and the input's id (no allocation), or a
/// closure promise, ``init(_:)`` (one allocation per input). Either way the design, not the
/// promise, enforces the guarantees above (see <doc:WritingADesign>).
public struct StepPromise: Sendable {
    @usableFromInline
    enum Storage: Sendable {
        case target(any StepPromiseTarget, StepPromiseID)
        case closure(@Sendable (StepRequest) -> Void)
    }

    @usableFromInline
    let storage: Storage

    /// A value promise: fulfilling it calls `target.completePromise(id: id, request:)`.
    /// Allocates nothing; holds one strong reference to `target`.
    @inlinable
    public init(target: any StepPromiseTarget, id: StepPromiseID) {
        storage = .target(target, id)
    }

    /// A closure promise: fulfilling it calls `body` (on the fulfilling thread, every time it is
    /// called: `body` must ignore calls after the first, and calls of a stale promise).
    @inlinable
    public init(_ body: @escaping @Sendable (StepRequest) -> Void) {
        storage = .closure(body)
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

/// Identifies the input a value promise belongs to (``StepPromise/init(target:id:)``).
/// ``StepStateMachine`` hands out increasing ids and never reuses one, so a stale promise
/// never matches a later input.
public typealias StepPromiseID = UInt64

/// What a value promise (``StepPromise/init(target:id:)``) reports to: usually the subscriber.
///
/// `completePromise(id:request:)` may be called from any thread, any number of times, with any
/// id ever handed out, during or after the stepper call that received the promise. It must act
/// only for the current input's id, only once (rules S2 and S3), and it must not call the
/// stepper, `request` or `cancel` while holding a lock of the design's own.
public protocol StepPromiseTarget: AnyObject, Sendable {
    /// The promise `id` was fulfilled with `request`.
    func completePromise(id: StepPromiseID, request: StepRequest)
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
