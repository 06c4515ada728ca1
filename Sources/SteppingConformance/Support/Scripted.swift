import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// One design driven by hand: a recording subscription, a probe stepper, the subscriber.
package struct Scripted: @unchecked Sendable {  // every member is a thread-safe object
    package let design: SteppingDesign
    package let upstream = RecordingSubscription()
    package let probe: StepperProbe<Int>
    package let subscriber: any SteppingSubscriber<Int, TestError>
    /// Demand the subscriber returned from `receive(_:)`, in order.
    private let returned = Box<[Subscribers.Demand]>([])

    package init(_ design: SteppingDesign, subscribe: Bool = true, reaction: StepperProbe<Int>.Reaction? = nil) {
        self.design = design
        probe = StepperProbe<Int>(reaction: reaction)
        subscriber = design.subscriber(probe)
        if subscribe {
            let (subscriber, upstream) = (subscriber, upstream)
            subscriber.receive(subscription: upstream)
            settle()
        }
    }

    /// Sends an input as upstream would, then lets asynchronous designs finish with it.
    @discardableResult
    package func send(_ value: Int) -> Subscribers.Demand {
        let demand = subscriber.receive(value)
        returned.mutate { $0.append(demand) }
        settle()
        return demand
    }

    package func complete(_ completion: Subscribers.Completion<TestError> = .finished) {
        subscriber.receive(completion: completion)
        settle()
    }

    package func cancel() {
        subscriber.cancel()
        settle()
    }

    package func settle() { settleDesign(subscriber) }

    package var returnedDemands: [Subscribers.Demand] { returned.value }
    /// Every unit of demand signalled upstream: requested plus returned.
    package var totalDemand: Int {
        let requested = upstream.calls.reduce(0) { sum, call in
            if case .request(let d) = call { return sum + (d.max ?? 1_000_000) }
            return sum
        }
        return requested + returnedDemands.reduce(0) { $0 + ($1.max ?? 1_000_000) }
    }
}

/// Runs `body` on a new thread and waits (bounded) for it to finish.
package func onAnotherThread(timeout: Double = 10, _ body: @escaping @Sendable () -> Void) -> pthread_t? {
    let done = DispatchSemaphore(value: 0)
    let id = Box<pthread_t?>(nil)
    let thread = Thread {
        id.mutate { $0 = pthread_self() }
        body()
        done.signal()
    }
    thread.start()
    let timeout = Conformance.patience(timeout)
    guard done.wait(timeout: .now() + timeout) == .success else {
        expect(false, "a helper thread did not finish in \(timeout) s (a deadlock, or a stall: R4)")
        return nil
    }
    return id.value
}
