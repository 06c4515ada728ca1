@preconcurrency import OpenCombine

/// A design that subscribes itself: given a publisher and a stepper, it subscribes whatever it
/// needs (an operator chain, an `AsyncSequence` loop on a task, a channel) and returns what
/// cancels it. Describe one with ``SteppingDesign/init(name:traits:strategy:)``.
///
/// The stepper contract is the same as a subscriber design's: each input comes with a
/// ``StepPromise``; `.more` asks for the next input, `.cancel` stops, and the completion is the
/// last event. The conformance kit holds a strategy to the same rules as any design.
public protocol SteppingStrategy: Sendable {
    /// Subscribes to `upstream` and calls `stepper` with each input (and a promise) and the
    /// completion. Cancelling the result cancels the subscription.
    func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable
}

/// Makes a strategy's subscribers: each is a ``StrategySubscriber`` that hands itself, as a
/// publisher, to the strategy.
struct StrategySubscriberFactory: SteppingSubscriberFactory {
    let strategy: any SteppingStrategy
    let deliversAsynchronously: Bool

    func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        StrategySubscriber(strategy: strategy, deliversAsynchronously: deliversAsynchronously, stepper: stepper)
    }
}
