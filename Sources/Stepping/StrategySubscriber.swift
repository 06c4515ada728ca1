import Foundation
@preconcurrency import OpenCombine

/// A strategy design's subscriber (``SteppingStrategy``): it stands where a subscriber is
/// expected (``SteppingDesign/makeSubscriber(stepper:)``, the suite's scenarios and checks) and
/// is itself the publisher the strategy subscribes to, so every path and rule can be driven on a
/// design that subscribes itself.
///
/// What it adds to the strategy, per element: one forwarding call for each signal, a lock
/// around its bookkeeping four times (input, stepper call, promise, request), and a value
/// promise wrapping the strategy's own (no allocation). It decides nothing: signals that arrive
/// before the strategy has subscribed wait for it, in order; everything else is forwarded, and
/// every fulfilment of the eight most recent promises reaches the strategy's promise, repeated
/// and stale ones included. The stepper is captured by the closure the strategy holds, so the
/// strategy, not this relay, decides when it is released (rule R1).
///
/// Idle (``waitUntilIdle()``) means nothing it forwarded is still owed a reaction by a
/// conforming strategy (a requested input the stepper has not seen, a fulfilled promise not yet
/// answered by a request or cancel, a subscription not yet requested from, upstream's first
/// completion once no promise is open and the stepper did not say `.cancel`, a `cancel()` not
/// yet passed upstream) and nothing happened for 2 ms; it waits 2 s at most, so a strategy that
/// never reacts is seen by the check that waited. A synchronous strategy is idle when a signal
/// returns. After `cancel()`, a subscription that arrives is cancelled here (the strategy has
/// been cancelled and has nothing to give it to).
final class StrategySubscriber<Input, Failure: Error>: SteppingSubscriber, Publisher, StepPromiseTarget,
    AsynchronousDelivery, @unchecked Sendable  // `state` behind `lock`
{
    typealias Output = Input

    private enum Early {
        case subscription
        case completion(Subscribers.Completion<Failure>)
    }

    private struct State {
        var inner: AnySubscriber<Input, Failure>?
        var upstream: (any Subscription)?
        var early: [Early] = []
        var cancellable: AnyCancellable?
        var subscribed = false
        var cancelled = false
        var ended = false
        /// Upstream's completion has arrived (after the subscription).
        var completed = false
        /// The stepper answered its latest promise with `.cancel`.
        var stopped = false
        /// The strategy's promises by id modulo 8, and the last id handed to the stepper.
        var promises = [StepPromise?](repeating: nil, count: 8)
        var promiseID: StepPromiseID = 0
        var answeredID: StepPromiseID = 0
        // What is owed a reaction (see the type's comment).
        var inputsOwed = 0
        var answerOwed = false
        /// What the strategy has requested and upstream not yet sent.
        var demand = Subscribers.Demand.none
        var requestOwed = false
        var completionOwed = false
        var cancelOwed = false
        var events: UInt64 = 0

        /// Whether a promise handed to the stepper is still open: a completion waits for it.
        var promiseOpen: Bool { answeredID != promiseID }

        /// Whether a conforming strategy still owes a reaction. What it may rightly leave alone
        /// is not owed: a demand after upstream completed or after `cancel()`, a completion while
        /// a promise is open (it waits for the promise) or after `cancel()`.
        var owes: Bool {
            if cancelOwed { return true }
            if cancelled || ended { return false }
            if inputsOwed > 0 { return true }
            if completed { return completionOwed && !promiseOpen && !stopped }
            return answerOwed || requestOwed
        }

        mutating func endOwing() {
            inputsOwed = 0
            answerOwed = false
            requestOwed = false
            completionOwed = false
            cancelOwed = false
        }
    }

    private let lock = NSLock()
    private var state = State()
    /// Whether the strategy delivers on its own executor: only then can there be anything to
    /// wait for after a signal returns.
    private let deliversAsynchronously: Bool

    /// Runs `body` on the state, counting an event.
    private func locked<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        state.events &+= 1
        return body(&state)
    }

    /// Reads the state without counting an event.
    private func peek<R>(_ body: (State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(state)
    }

    init(
        strategy: any SteppingStrategy, deliversAsynchronously: Bool,
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) {
        self.deliversAsynchronously = deliversAsynchronously
        let cancellable = strategy.step(self) { [self] event in
            stepper(noting(event))
        }
        locked { if $0.cancelled || $0.ended { return } else { $0.cancellable = cancellable } }
    }

    /// Made by a strategy design only (``SteppingDesign/makeSubscriber(stepper:)``), which
    /// passes its strategy; the protocol's initialiser has none to run.
    convenience init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        preconditionFailure("StrategySubscriber is made by its design's makeSubscriber(stepper:)")
    }

    /// Bookkeeping for an event on its way to the stepper: an input's promise is wrapped so
    /// that its fulfilment is seen.
    private func noting(_ event: StepEvent<Input, Failure>) -> StepEvent<Input, Failure> {
        switch event {
        case .input(let input, let promise):
            let id = locked { state in
                state.inputsOwed = Swift.max(0, state.inputsOwed - 1)
                state.promiseID += 1
                state.promises[Int(state.promiseID % 8)] = promise
                return state.promiseID
            }
            return .input(input, StepPromise(target: self, id: id))
        case .completion:
            let cancellable = locked { state in
                state.endOwing()  // the last event: nothing more is owed
                state.ended = true
                state.upstream = nil
                return state.cancellable.take()
            }
            _ = cancellable
            return event
        }
    }

    func completePromise(id: StepPromiseID, request: StepRequest) {
        let promise: StepPromise? = locked { state in
            guard id > 0, id <= state.promiseID, state.promiseID - id < 8 else { return nil }
            if id == state.promiseID, state.answeredID != id {
                state.answeredID = id
                // `.more` is answered by a request, unless the strategy asked ahead already.
                state.answerOwed = request == .cancel || state.demand == .none
                // Told to stop, the strategy owes the stepper no completion (rule C6).
                if request == .cancel {
                    state.stopped = true
                    state.completionOwed = false
                }
            }
            return state.promises[Int(id % 8)]
        }
        promise?(request)
    }

    // MARK: The publisher the strategy subscribes to

    func receive<S: Subscriber>(subscriber: S) where S.Input == Input, S.Failure == Failure {
        let early: [Early]? = locked { state in
            guard state.inner == nil else { return nil }
            state.inner = AnySubscriber(subscriber)
            defer { state.early = [] }
            for signal in state.early {
                switch signal {
                case .subscription: state.requestOwed = true
                case .completion: state.completionOwed = true
                }
            }
            return state.early
        }
        guard let early else {
            // One subscriber per relay, as a subscriber has one upstream.
            subscriber.receive(subscription: Subscriptions.empty)
            subscriber.receive(completion: .finished)
            return
        }
        for signal in early {
            switch signal {
            case .subscription: subscriber.receive(subscription: RelaySubscription(relay: self))
            case .completion(let completion): subscriber.receive(completion: completion)
            }
        }
    }

    // MARK: The subscriber upstream sees

    func receive(subscription: any Subscription) {
        let inner: AnySubscriber<Input, Failure>?? = locked { state in
            guard !state.cancelled, !state.subscribed else { return .none }
            state.subscribed = true
            state.upstream = subscription
            state.requestOwed = true  // the strategy is to subscribe, if it has not, and request
            guard let inner = state.inner else {
                state.early.append(.subscription)
                return .some(nil)
            }
            return inner
        }
        switch inner {
        case .none: subscription.cancel()  // after cancel(), or a second subscription
        case .some(nil): break
        case .some(let inner?): inner.receive(subscription: RelaySubscription(relay: self))
        }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        guard
            let inner = locked({ state -> AnySubscriber<Input, Failure>? in
                // Before the subscription an input is the strategy's to ignore (rule C5).
                guard state.subscribed else { return state.inner }
                // An input nobody asked for, or after the end, is a conforming strategy's to drop.
                if state.demand > .none, !state.cancelled, !state.ended, !state.completed {
                    state.inputsOwed += 1
                    state.demand -= 1
                }
                return state.inner
            })
        else { return .none }
        let demand = inner.receive(input)
        if demand > .none {
            locked {
                $0.answerOwed = false
                $0.demand += demand
            }
        }
        return demand
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        let inner = locked { state -> AnySubscriber<Input, Failure>? in
            // Before the subscription a completion is the strategy's to ignore (rule C5): it
            // is forwarded, and ends nothing here.
            guard state.subscribed else { return state.inner }
            state.upstream = nil
            // Only the first completion is owed to the stepper; a later one is upstream's error.
            state.completionOwed = !state.completed && !state.ended && !state.cancelled && !state.stopped
            state.completed = true
            guard let inner = state.inner else {
                state.early.append(.completion(completion))
                return nil
            }
            state.inner = nil  // the relay's cycle (inner -> its subscription -> relay) ends here
            return inner
        }
        inner?.receive(completion: completion)
    }

    func cancel() {
        let (cancellable, unclaimed) = locked { state -> (AnyCancellable?, (any Subscription)?) in
            guard !state.cancelled else { return (nil, nil) }
            state.cancelled = true
            guard state.inner != nil else {
                // The strategy has not subscribed yet: what waited for it is cancelled here.
                state.early = []
                return (state.cancellable.take(), state.upstream.take())
            }
            state.cancelOwed = state.upstream != nil && !state.ended
            return (state.cancellable.take(), nil)
        }
        cancellable?.cancel()
        unclaimed?.cancel()
    }

    // MARK: The subscription the strategy sees

    fileprivate func request(_ demand: Subscribers.Demand) {
        let upstream = locked { state -> (any Subscription)? in
            state.answerOwed = false
            state.requestOwed = false
            state.demand += demand
            return state.upstream
        }
        upstream?.request(demand)
    }

    fileprivate func cancelUpstream() {
        let (upstream, cancellable, inner) = locked { state in
            state.endOwing()
            state.ended = true
            return (state.upstream.take(), state.cancellable.take(), state.inner.take())
        }
        upstream?.cancel()
        _ = (cancellable, inner)
    }

    // MARK: AsynchronousDelivery

    func waitUntilIdle() {
        guard deliversAsynchronously else { return }
        let start = DispatchTime.now().uptimeNanoseconds
        var quiet: (events: UInt64, since: UInt64)?
        while true {
            let (owes, events) = peek { ($0.owes, $0.events) }
            let now = DispatchTime.now().uptimeNanoseconds
            if now - start >= 2_000_000_000 { return }
            if owes {
                quiet = nil
            } else if let q = quiet, q.events == events {
                if now - q.since >= 2_000_000 { return }
            } else {
                quiet = (events, now)
            }
            usleep(100)
        }
    }

    var mailboxDescription: String {
        peek { state in
            "relay: \(state.inputsOwed) input(s) not yet stepped, answer owed \(state.answerOwed), "
                + "request owed \(state.requestOwed), completion owed \(state.completionOwed), "
                + "cancel owed \(state.cancelOwed)"
        }
    }
}

/// The subscription a strategy's subscriber hands the strategy: it forwards to upstream's and
/// lets the relay see the strategy's answers.
private final class RelaySubscription<Input, Failure: Error>: Subscription, @unchecked Sendable {  // immutable
    let relay: StrategySubscriber<Input, Failure>
    init(relay: StrategySubscriber<Input, Failure>) { self.relay = relay }
    func request(_ demand: Subscribers.Demand) { relay.request(demand) }
    func cancel() { relay.cancelUpstream() }
}
