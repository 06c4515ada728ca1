@preconcurrency import OpenCombine

/// Every transition of the stepping subscriber, as a pure value type.
///
/// It holds no lock and has no side effects: each method takes one signal, changes `state`
/// and returns the action the caller must perform *after* leaving its critical section
/// (call the stepper, request, cancel). The designs `locked`, `mutex` and `actor` wrap it in
/// one synchronisation strategy each; `atomic` mirrors it and is tested against it; `seed`
/// is the original it was distilled from and behaves identically.
///
/// The stepper is kept as an opaque object (the design's box around its typed closure) so
/// this type is not generic: no metadata look-ups on the hot path.
@usableFromInline
struct StepStateMachine {
    /// Identifies the promise handed out with one input. 64 bits: it cannot wrap around.
    @usableFromInline
    typealias PromiseID = UInt64
    /// The id no promise has; the valid id once the current promise has acted.
    @usableFromInline
    static let noPromiseID: PromiseID = 0

    @usableFromInline
    struct Subscribed {
        @usableFromInline var stepper: AnyObject
        @usableFromInline var subscription: any Subscription
        /// The id of the one promise that may still act, or `noPromiseID`.
        @usableFromInline var validPromiseID: PromiseID

        @inlinable
        init(stepper: AnyObject, subscription: any Subscription, validPromiseID: PromiseID) {
            self.stepper = stepper
            self.subscription = subscription
            self.validPromiseID = validPromiseID
        }
    }

    @usableFromInline
    enum State {
        /// Waiting for the subscription from upstream.
        case subscribing(stepper: AnyObject)
        /// Waiting for an input or completion from upstream, or for the current promise.
        case subscribed(Subscribed)
        /// Calling the stepper with an input. `shouldRequestMore` is set when the promise is
        /// fulfilled with `.more` during that call: the demand is then returned from
        /// `receive(_:)` instead of requested.
        case stepping(Subscribed, shouldRequestMore: Bool)
        /// Completed or cancelled: the stepper and subscription are released.
        case dead
    }

    @usableFromInline private(set) var state: State
    @usableFromInline private(set) var nextPromiseID: PromiseID = 1

    @inlinable
    init(stepper: AnyObject) {
        state = .subscribing(stepper: stepper)
    }

    /// Whether the machine has completed or been cancelled.
    @inlinable
    var isDead: Bool {
        if case .dead = state { return true }
        return false
    }

    // MARK: receive(subscription:)

    @usableFromInline
    enum ReceiveSubscriptionAction {
        /// Ask this (first) subscription for `.max(1)`.
        case requestFirst(any Subscription)
        /// Already subscribed, or dead: cancel the subscription just received (RS 2.5).
        case cancel(any Subscription)
    }

    @inlinable
    mutating func receiveSubscription(_ subscription: any Subscription) -> ReceiveSubscriptionAction {
        guard case .subscribing(let stepper) = state else {
            return .cancel(subscription)
        }
        state = .subscribed(Subscribed(stepper: stepper, subscription: subscription,
                                       validPromiseID: Self.noPromiseID))
        return .requestFirst(subscription)
    }

    // MARK: receive(_:)

    @usableFromInline
    enum ReceiveInputAction {
        /// Call the stepper with the input and a promise carrying `promiseID`, then call
        /// `stepperReturned()`.
        case callStepper(AnyObject, promiseID: PromiseID)
        /// Not subscribed (before subscription, after completion or cancel): drop the input.
        case ignore
    }

    @inlinable
    mutating func receiveInput() -> ReceiveInputAction {
        guard case .subscribed(var subscribed) = state else {
            return .ignore
        }
        let id = nextPromiseID
        nextPromiseID &+= 1
        subscribed.validPromiseID = id
        let stepper = subscribed.stepper
        state = .stepping(subscribed, shouldRequestMore: false)
        return .callStepper(stepper, promiseID: id)
    }

    /// The stepper returned from an input call. Returns the demand `receive(_:)` must return:
    /// `.max(1)` if the promise was fulfilled with `.more` during the call, else `.none`.
    @inlinable
    mutating func stepperReturned() -> Subscribers.Demand {
        guard case .stepping(let subscribed, let shouldRequestMore) = state else {
            return .none  // cancelled during the call
        }
        state = .subscribed(subscribed)
        return shouldRequestMore ? .max(1) : .none
    }

    // MARK: promise

    @usableFromInline
    enum CompletePromiseAction {
        case none
        /// The promise was fulfilled with `.more` after the stepper returned.
        case request(any Subscription)
        /// The promise was fulfilled with `.cancel`.
        case cancel(any Subscription)
    }

    @inlinable
    mutating func completePromise(id: PromiseID, request: StepRequest) -> CompletePromiseAction {
        switch state {
        case .dead, .subscribing:
            return .none
        case .subscribed(var subscribed):
            guard subscribed.validPromiseID == id, id != Self.noPromiseID else { return .none }
            switch request {
            case .more:
                subscribed.validPromiseID = Self.noPromiseID
                state = .subscribed(subscribed)
                return .request(subscribed.subscription)
            case .cancel:
                state = .dead
                return .cancel(subscribed.subscription)
            }
        case .stepping(var subscribed, _):
            guard subscribed.validPromiseID == id, id != Self.noPromiseID else { return .none }
            switch request {
            case .more:
                subscribed.validPromiseID = Self.noPromiseID
                state = .stepping(subscribed, shouldRequestMore: true)
                return .none
            case .cancel:
                state = .dead
                return .cancel(subscribed.subscription)
            }
        }
    }

    // MARK: receive(completion:)

    @usableFromInline
    enum ReceiveCompletionAction {
        /// Call the stepper with the completion; the machine is now dead.
        case callStepper(AnyObject)
        /// Not subscribed, or upstream signalled concurrently with an input: ignore.
        case ignore
    }

    @inlinable
    mutating func receiveCompletion() -> ReceiveCompletionAction {
        guard case .subscribed(let subscribed) = state else {
            return .ignore
        }
        state = .dead
        return .callStepper(subscribed.stepper)
    }

    // MARK: cancel()

    @usableFromInline
    enum CancelAction {
        case none
        case cancel(any Subscription)
    }

    @inlinable
    mutating func cancel() -> CancelAction {
        switch state {
        case .dead:
            return .none
        case .subscribing:
            state = .dead
            return .none
        case .subscribed(let subscribed), .stepping(let subscribed, _):
            state = .dead
            return .cancel(subscribed.subscription)
        }
    }
}
