import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// A design one input ahead (rule D2 broken) whose request for the next input comes `delay`
/// after it takes one, on another thread; the stepper runs on the thread that delivers the input.
struct LateAheadStrategy: SteppingStrategy {
    let delay: DispatchTimeInterval

    func step<Upstream: Publisher>(
        _ upstream: Upstream, stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let subscriber = Ahead<Upstream.Output, Upstream.Failure>(delay: delay, stepper: stepper)
        upstream.subscribe(subscriber)
        return AnyCancellable { subscriber.subscription.value?.cancel() }
    }

    // @unchecked: `subscription` is behind its lock
    private final class Ahead<Input, Failure: Error>: Subscriber, @unchecked Sendable {
        let delay: DispatchTimeInterval
        let stepper: @Sendable (StepEvent<Input, Failure>) -> Void
        let subscription = LockedValue<(any Subscription)?>(nil)
        let combineIdentifier = CombineIdentifier()

        init(delay: DispatchTimeInterval, stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
            (self.delay, self.stepper) = (delay, stepper)
        }

        func receive(subscription: any Subscription) {
            self.subscription.value = subscription
            subscription.request(.max(1))
        }

        func receive(_ input: Input) -> Subscribers.Demand {
            let subscription = self.subscription
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { subscription.value?.request(.max(1)) }
            stepper(.input(input, StepPromise { if $0 == .cancel { subscription.value?.cancel() } }))
            return .none
        }

        func receive(completion: Subscribers.Completion<Failure>) { stepper(.completion(completion)) }
    }
}

/// A value behind a lock.
private final class LockedValue<Value>: @unchecked Sendable {  // `stored` behind `lock`
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
