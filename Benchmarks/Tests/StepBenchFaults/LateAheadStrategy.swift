import Foundation
@preconcurrency import OpenCombine
import Stepping

/// A design one input ahead (rule D2 broken) whose request for the next input comes `delay`
/// after it takes one, on another thread; the stepper runs on the thread that delivers the input.
struct LateAheadStrategy: SteppingStrategy {
    let delay: Double

    func step<Upstream: Publisher>(
        _ upstream: Upstream, stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let subscriber = Ahead<Upstream.Output, Upstream.Failure>(delay: delay, stepper: stepper)
        upstream.subscribe(subscriber)
        return AnyCancellable { subscriber.subscription.value?.cancel() }
    }

    // @unchecked: `subscription` is behind its lock
    private final class Ahead<Input, Failure: Error>: Subscriber, @unchecked Sendable {
        let delay: Double
        let stepper: @Sendable (StepEvent<Input, Failure>) -> Void
        let subscription = LockedValue<(any Subscription)?>(nil)
        let combineIdentifier = CombineIdentifier()

        init(delay: Double, stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
            (self.delay, self.stepper) = (delay, stepper)
        }

        func receive(subscription: any Subscription) {
            self.subscription.value = subscription
            subscription.request(.max(1))
        }

        func receive(_ input: Input) -> Subscribers.Demand {
            let subscription = self.subscription
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) { subscription.value?.request(.max(1)) }
            let calls = LockedValue(0)
            let hold = delay * 2
            stepper(
                .input(
                    input,
                    StepPromise { request in
                        guard request == .more else { return subscription.value?.cancel() ?? () }
                        calls.value += 1
                        // The first repeated .more holds its caller twice the delay: a window of
                        // stale calls then outlasts the request ahead, whenever it began.
                        if calls.value == 2 { Thread.sleep(forTimeInterval: hold) }
                    }))
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
