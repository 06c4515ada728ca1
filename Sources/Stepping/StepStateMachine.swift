@preconcurrency import OpenCombine

/// Every transition of the stepping subscriber, as a pure value type.
///
/// It holds no lock and has no side effects: each method takes one signal, changes `state`
/// and returns the action the caller must perform *after* leaving its critical section
/// (call the stepper, request, cancel). The designs `locked`, `mutex` and `actor` wrap it in
/// one synchronisation strategy each; `atomic` mirrors it and is tested against it; `seed`
/// is the original it was distilled from, and differs where the original breaks rules S1, C6
/// and R3 (CONFORMANCE.md, "What the original gets wrong").
///
/// The stepper is kept as an opaque object (the design's box around its typed closure) so
/// this type is not generic: no metadata look-ups on the hot path.
///
/// Storage: the phase is a trivial enum and the stepper, subscription and pending completion
/// are fields beside it, so the per-element transitions change plain values and never copy
/// (retain and release) the references; ``state`` is the same machine seen as one enum with
/// payloads, for tests and descriptions. A reference leaves the machine only in an action:
/// copied when the caller needs it for a call-out while the machine keeps it, moved out when
/// the machine dies.
public struct StepStateMachine {
    /// Identifies the promise handed out with one input. 64 bits, and the increment traps on
    /// overflow rather than wrapping, so a stale promise can never match a later input's id.
    public typealias PromiseID = StepPromiseID
    /// The id no promise has; the valid id once the current promise has acted.
    public static let noPromiseID: PromiseID = 0

    /// The references a subscribed machine holds, carried out of it by the actions that kill it.
    public struct Subscribed {
        /// The object the design gave ``StepStateMachine/init(stepper:)``.
        public var stepper: AnyObject
        /// The first subscription received.
        public var subscription: any Subscription
        /// The id of the one promise that may still act, or `noPromiseID`.
        public var validPromiseID: PromiseID

        /// Creates the references of a subscribed machine.
        @inlinable
        public init(stepper: AnyObject, subscription: any Subscription, validPromiseID: PromiseID) {
            self.stepper = stepper
            self.subscription = subscription
            self.validPromiseID = validPromiseID
        }
    }

    /// The machine's state with its payloads (see ``state``).
    public enum State {
        /// Waiting for the subscription from upstream.
        case subscribing(stepper: AnyObject)
        /// Waiting for an input or completion from upstream, or for the current promise.
        case subscribed(Subscribed)
        /// Calling the stepper with an input. `shouldRequestMore` is set when the promise is
        /// fulfilled with `.more` during that call: the demand is then returned from
        /// `receive(_:)` instead of requested. `completion` holds a completion that upstream
        /// delivered re-entrantly, from inside the stepper call: it reaches the stepper once the
        /// call returns (rule C6), and a `.more` of the same call is then moot.
        case stepping(Subscribed, shouldRequestMore: Bool, completion: Ending?)
        /// Completed or cancelled: the stepper and subscription are released.
        case dead
    }

    /// A completion with its failure type erased, so that this type stays non-generic. Only a
    /// re-entrant completion is ever stored (once per subscriber); designs turn it back into
    /// their `Subscribers.Completion<Failure>` with ``typed(as:)``.
    public enum Ending: Sendable {
        /// Upstream finished.
        case finished
        /// Upstream failed with this error (of the subscriber's `Failure` type).
        case failure(any Error)

        /// Erases the failure type of `completion`.
        @inlinable
        public init<Failure: Error>(_ completion: Subscribers.Completion<Failure>) {
            switch completion {
            case .finished: self = .finished
            case .failure(let error): self = .failure(error)
            }
        }

        /// The completion as it came from upstream. Only `Failure` errors are ever stored.
        @inlinable
        public func typed<Failure: Error>(as _: Failure.Type = Failure.self) -> Subscribers.Completion<Failure> {
            switch self {
            case .finished: .finished
            case .failure(let error): .failure(error as! Failure)
            }
        }
    }

    /// Where the machine is; the payloads of ``State`` live in the fields below.
    @usableFromInline
    enum Phase {
        case subscribing, subscribed, stepping, dead
    }

    @usableFromInline private(set) var phase: Phase = .subscribing
    /// Held from `init` until the machine dies.
    @usableFromInline private(set) var stepper: AnyObject?
    /// Held from the first subscription until the machine dies.
    @usableFromInline private(set) var subscription: (any Subscription)?
    /// The id of the one promise that may still act, or `noPromiseID` (subscribed, stepping).
    @usableFromInline private(set) var validPromiseID: PromiseID = Self.noPromiseID
    /// Stepping: the promise was fulfilled with `.more` during the stepper call.
    @usableFromInline private(set) var shouldRequestMore = false
    /// Stepping: a completion that arrived re-entrantly, from inside the stepper call.
    @usableFromInline private(set) var pendingCompletion: Ending?
    @usableFromInline private(set) var nextPromiseID: PromiseID = 1

    /// Creates a machine waiting for its subscription. `stepper` is whatever object the design
    /// uses to reach its stepper (a box around the closure): the machine hands it back in the
    /// actions that call the stepper and releases it when it dies.
    @inlinable
    public init(stepper: AnyObject) {
        self.stepper = stepper
    }

    /// The machine as one enum with payloads (copies the references: not for hot paths).
    @inlinable
    public var state: State {
        switch phase {
        case .subscribing: .subscribing(stepper: stepper!)
        case .subscribed: .subscribed(subscribed)
        case .stepping: .stepping(subscribed, shouldRequestMore: shouldRequestMore, completion: pendingCompletion)
        case .dead: .dead
        }
    }

    /// Whether the machine is subscribed and not stepping (demand may go upstream).
    @inlinable
    var isSubscribedAndIdle: Bool { phase == .subscribed }

    /// Asks the subscription for `demand`, calling it where it is stored: returning it to the
    /// caller copied the existential (a box copy, a retain and a release per element on the
    /// `actor` design's path). Only while ``isSubscribedAndIdle``.
    @inlinable
    func requestFromSubscription(_ demand: Subscribers.Demand) {
        subscription?.request(demand)
    }

    @inlinable
    var subscribed: Subscribed {
        Subscribed(stepper: stepper!, subscription: subscription!, validPromiseID: validPromiseID)
    }

    /// Kills the machine and moves its references out, for the action that lets go of them
    /// after unlocking (rule R3).
    @inlinable
    mutating func die() -> (stepper: AnyObject, subscription: (any Subscription)?) {
        phase = .dead
        validPromiseID = Self.noPromiseID
        shouldRequestMore = false
        pendingCompletion = nil
        return (stepper.take()!, subscription.take())
    }

    /// `die()` from a subscribed or stepping machine, which has both references.
    @inlinable
    mutating func dieSubscribed() -> Subscribed {
        let id = validPromiseID
        let (stepper, subscription) = die()
        return Subscribed(stepper: stepper, subscription: subscription!, validPromiseID: id)
    }

    /// Whether the machine has completed or been cancelled.
    @inlinable
    public var isDead: Bool { phase == .dead }

    // MARK: receive(subscription:)

    /// What to do after ``receiveSubscription(_:)``.
    public enum ReceiveSubscriptionAction {
        /// Ask this (first) subscription for `.max(1)`.
        case requestFirst(any Subscription)
        /// Already subscribed, or dead: cancel the subscription just received (RS 2.5).
        case cancel(any Subscription)
    }

    /// `receive(subscription:)`: the first subscription is kept and asked for `.max(1)`; any
    /// later one, or one after cancel, is cancelled (rule C3).
    @inlinable
    public mutating func receiveSubscription(_ subscription: any Subscription) -> ReceiveSubscriptionAction {
        defer { checkInvariants() }
        guard phase == .subscribing else { return .cancel(subscription) }
        phase = .subscribed
        self.subscription = subscription
        return .requestFirst(subscription)
    }

    // MARK: receive(_:)

    /// What to do with an input after ``receiveInput()``.
    public enum ReceiveInputAction {
        /// Call the stepper with the input and a promise carrying `promiseID`, then call
        /// `stepperReturned()`.
        case callStepper(AnyObject, promiseID: PromiseID)
        /// Not subscribed (before subscription, after completion or cancel), or no demand
        /// outstanding (an upstream that ignores demand, RS 1.1): drop the input.
        case ignore
    }

    /// An input is taken only with demand outstanding: in `subscribed` with no promise pending
    /// (after the first request, or after the last promise said `.more`). Anything else would
    /// call the stepper while its previous promise is unfulfilled (rule S1).
    @inlinable @inline(__always)  // per element in every design
    public mutating func receiveInput() -> ReceiveInputAction {
        defer { checkInvariants() }
        guard phase == .subscribed, validPromiseID == Self.noPromiseID else { return .ignore }
        let id = nextPromiseID
        nextPromiseID += 1
        validPromiseID = id
        phase = .stepping
        shouldRequestMore = false
        return .callStepper(stepper.unsafelyUnwrapped, promiseID: id)
    }

    /// What to do after ``stepperReturned()``.
    public enum StepperReturnedAction {
        /// Return this demand from `receive(_:)`: `.max(1)` if the promise was fulfilled with
        /// `.more` during the call, else `.none` (also when cancelled during the call).
        case demand(Subscribers.Demand)
        /// Upstream completed during the call: call the stepper with the completion, then let
        /// go of `released` (after unlocking); return `.none`. The machine is dead.
        case deliverCompletion(Ending, released: Subscribed)
    }

    /// The stepper returned from an input call.
    @inlinable @inline(__always)  // per element in every design
    public mutating func stepperReturned() -> StepperReturnedAction {
        defer { checkInvariants() }
        guard phase == .stepping else { return .demand(.none) }  // cancelled during the call
        if let completion = pendingCompletion {
            return .deliverCompletion(completion, released: dieSubscribed())
        }
        phase = .subscribed
        return .demand(shouldRequestMore ? .max(1) : .none)
    }

    // MARK: promise

    /// What to do after ``completePromise(id:request:)``.
    public enum CompletePromiseAction {
        /// Nothing: a stale promise, one that already acted, or `.more` during the stepper call
        /// (returned as demand when the stepper returns).
        case none
        /// The promise was fulfilled with `.more` after the stepper returned.
        case request(any Subscription)
        /// The promise was fulfilled with `.cancel`: cancel `released.subscription`, then let go
        /// of `released` (after unlocking: rule R3). The machine is dead.
        case cancel(released: Subscribed)
        /// Fulfilled with `.cancel` after upstream had completed re-entrantly: nothing goes
        /// upstream (it has completed); let go of `released` after unlocking. The machine is dead.
        case release(Subscribed)
    }

    /// A promise was fulfilled. Only the promise of the current input acts, once (S2, S3).
    @inlinable @inline(__always)  // per element in every design
    public mutating func completePromise(id: PromiseID, request: StepRequest) -> CompletePromiseAction {
        defer { checkInvariants() }
        guard phase == .subscribed || phase == .stepping, validPromiseID == id, id != Self.noPromiseID else {
            return .none  // dead, subscribing, or not the valid promise
        }
        switch (phase, request) {
        case (.subscribed, .more):
            validPromiseID = Self.noPromiseID
            return .request(subscription.unsafelyUnwrapped)
        case (_, .more):  // stepping: returned as demand when the stepper returns
            validPromiseID = Self.noPromiseID
            shouldRequestMore = true
            return .none
        case (_, .cancel):
            let completed = pendingCompletion != nil
            let released = dieSubscribed()
            return completed ? .release(released) : .cancel(released: released)
        }
    }

    // MARK: receive(completion:)

    /// What to do after ``receiveCompletion(_:)``.
    public enum ReceiveCompletionAction {
        /// Call the stepper (`released.stepper`) with the completion, then let go of `released`
        /// (after unlocking). The machine is dead.
        case callStepper(released: Subscribed)
        /// Kept until the stepper returns (a re-entrant completion, from inside the stepper call);
        /// ``stepperReturned()`` delivers it.
        case deferred
        /// Not subscribed, already completed or cancelled, or completed twice: ignore (C5).
        case ignore
    }

    /// `receive(completion:)`: delivered at once, kept until the stepper returns (C6), or ignored (C5).
    @inlinable
    public mutating func receiveCompletion(_ completion: Ending) -> ReceiveCompletionAction {
        defer { checkInvariants() }
        switch phase {
        case .subscribed:
            return .callStepper(released: dieSubscribed())
        case .stepping where pendingCompletion == nil:
            pendingCompletion = completion
            return .deferred
        case .subscribing, .stepping, .dead:
            return .ignore
        }
    }

    // MARK: cancel()

    /// What to do after ``cancel()`` or ``receiveCompletionAfterCancel()``.
    public enum CancelAction {
        /// Nothing: already dead.
        case none
        /// Cancel `released.subscription`, then let go of `released` after unlocking (R3).
        case cancel(released: Subscribed)
        /// Nothing goes upstream (no subscription yet, or upstream has completed re-entrantly);
        /// let go of the stepper (and subscription) after unlocking.
        case release(AnyObject, (any Subscription)?)
    }

    /// An asynchronous design's race (CONFORMANCE.md, C4 and C1): upstream completed, and
    /// `cancel()` was called before the design applied that completion. Both end the
    /// subscription; the stepper asked to stop, so it gets no completion, and upstream, which
    /// has completed, gets no cancel. Let go of the references after unlocking.
    @inlinable
    public mutating func receiveCompletionAfterCancel() -> CancelAction {
        defer { checkInvariants() }
        guard phase != .dead else { return .none }
        let (stepper, subscription) = die()
        return .release(stepper, subscription)
    }

    /// `cancel()` from the subscriber's owner: upstream is cancelled once, or, when nothing may go
    /// upstream, the references are only released (C4, C6).
    @inlinable
    public mutating func cancel() -> CancelAction {
        defer { checkInvariants() }
        switch phase {
        case .dead:
            return .none
        case .subscribing:
            return .release(die().stepper, nil)
        case .stepping where pendingCompletion != nil:
            let (stepper, subscription) = die()
            return .release(stepper, subscription)
        case .subscribed, .stepping:
            return .cancel(released: dieSubscribed())
        }
    }
}
