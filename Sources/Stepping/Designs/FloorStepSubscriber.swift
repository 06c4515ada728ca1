@preconcurrency import OpenCombine

/// Measurement only: the stepping API with no synchronisation, so that a design's cost splits
/// into the API's (floor-step against a plain `.max(1)` subscriber) and its synchronisation's
/// (the design against floor-step). Not a ``SteppingDesign``: `step(design:)` never offers it.
@_spi(Measurement)
public enum FloorStep {
    /// A subscriber that does each element's work of the API exactly as the designs do — the
    /// stepper held in a ``StepperBox`` built here (where the types are concrete), a
    /// ``StepEvent`` and a ``StepPromise`` of this object and an id per input, `.more` inside
    /// the call returned as demand and after it requested — with plain fields and no lock,
    /// atomic or queue. It obeys the rules (CONFORMANCE.md) as long as every call comes from
    /// one thread at a time; it is unsafe from two.
    @inlinable
    public static func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        FloorStepSubscriber(stepper: stepper)
    }
}

/// The subscriber of ``FloorStep``: the state of ``StepStateMachine`` in plain fields, each
/// transition inline.
@usableFromInline
final class FloorStepSubscriber<Input, Failure: Error>: SteppingSubscriber, StepPromiseTarget,
    @unchecked Sendable  // one thread at a time, by contract (``FloorStep``)
{
    @usableFromInline
    enum Phase { case subscribing, subscribed, stepping, completing, dead }

    // One thread at a time by contract: the run-time exclusivity check is off, as in the
    // designs whose lock or protocol already orders every access.
    @exclusivity(unchecked) @usableFromInline var phase = Phase.subscribing
    @exclusivity(unchecked) @usableFromInline var stepper: StepperBox<Input, Failure>?
    @exclusivity(unchecked) @usableFromInline var subscription: (any Subscription)?
    /// The one promise that may act, or ``StepStateMachine/noPromiseID``.
    @exclusivity(unchecked) @usableFromInline var validPromiseID = StepStateMachine.noPromiseID
    @exclusivity(unchecked) @usableFromInline var nextPromiseID: StepStateMachine.PromiseID = 1
    /// `.more` arrived during the stepper call: returned as demand when it returns.
    @exclusivity(unchecked) @usableFromInline var shouldRequestMore = false
    /// A completion that arrived during the stepper call, delivered when it returns (C6).
    @exclusivity(unchecked) @usableFromInline var pendingCompletion: StepStateMachine.Ending?

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.stepper = StepperBox(stepper)
    }

    /// Drops the stepper and the subscription (R1), after the last call-out that needs them.
    @inlinable
    func release() {
        stepper = nil
        subscription = nil
        pendingCompletion = nil
    }

    @inlinable
    func receive(subscription: any Subscription) {
        guard phase == .subscribing else {
            subscription.cancel()  // a second subscription, or cancelled before (RS 2.5)
            return
        }
        self.subscription = subscription
        phase = .subscribed
        subscription.request(.max(1))
    }

    @inlinable
    func receive(_ input: Input) -> Subscribers.Demand {
        // Only with demand outstanding (S1): no promise may act.
        guard phase == .subscribed, validPromiseID == StepStateMachine.noPromiseID else { return .none }
        let id = nextPromiseID
        nextPromiseID = id + 1
        validPromiseID = id
        phase = .stepping
        stepper.unsafelyUnwrapped.input(input, StepPromise(target: self, id: id))
        switch phase {
        case .stepping:
            phase = .subscribed
            guard shouldRequestMore else { return .none }
            shouldRequestMore = false
            return .max(1)
        case .completing:  // completed during the call (C6): delivered now
            phase = .dead
            validPromiseID = StepStateMachine.noPromiseID
            stepper.unsafelyUnwrapped.complete(pendingCompletion.unsafelyUnwrapped)
            release()
            return .none
        default:  // cancelled during the call: the cancel left the release to us
            release()
            return .none
        }
    }

    @inlinable
    func receive(completion: Subscribers.Completion<Failure>) {
        switch phase {
        case .subscribed:
            phase = .dead
            validPromiseID = StepStateMachine.noPromiseID
            stepper.unsafelyUnwrapped.complete(.init(completion))
            release()
        case .stepping:
            pendingCompletion = .init(completion)
            phase = .completing
        default:
            break
        }
    }

    @inlinable
    func cancel() {
        switch phase {
        case .subscribing:
            phase = .dead
            release()
        case .subscribed:
            phase = .dead
            validPromiseID = StepStateMachine.noPromiseID
            subscription.unsafelyUnwrapped.cancel()
            release()  // after the call-out, as the designs do (R3)
        case .stepping:  // inside the stepper call: it releases when the call returns
            phase = .dead
            validPromiseID = StepStateMachine.noPromiseID
            subscription.unsafelyUnwrapped.cancel()
        case .completing:  // upstream completed: nothing to cancel; the completion is dropped
            phase = .dead
        case .dead:
            break
        }
    }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        guard id == validPromiseID, phase == .subscribed || phase == .stepping || phase == .completing else { return }
        validPromiseID = StepStateMachine.noPromiseID
        switch request {
        case .more where phase == .subscribed: subscription.unsafelyUnwrapped.request(.max(1))
        case .more: shouldRequestMore = true  // returned as demand when the stepper returns
        case .cancel: cancel()  // after a re-entrant completion: dropped, nothing goes upstream
        }
    }
}
