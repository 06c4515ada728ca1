import Foundation
// OpenCombine 0.14.0's FlatMap (Publishers.FlatMap.swift): `receive(completion:)` releases
// `outerSubscription` under `lock`, while `requestOneMorePublisher`, run when a child Future
// completes, reads it under another lock, `outerLock`. Here upstream sends its last input and
// completes on this thread while another thread fulfils that input's Future, as async-step's
// emitter and fulfiller do with flatmap-future: the fulfiller can call `request` on a
// subscription the completion has just freed. Upstream takes no lock of its own, so the crash is
// FlatMap's alone. Argument: rounds (default 300,000).
@preconcurrency import OpenCombine
import Synchronization

final class Upstream: Publisher, Subscription, @unchecked Sendable {
    typealias Output = Int
    typealias Failure = Never
    let demand = Atomic<Int>(0)
    var subscriber: AnySubscriber<Int, Never>?
    func receive<S: Subscriber>(subscriber: S) where S.Input == Int, S.Failure == Never {
        self.subscriber = AnySubscriber(subscriber)
        subscriber.receive(subscription: self)
    }
    func request(_ d: Subscribers.Demand) { demand.add(d.max ?? 1, ordering: .relaxed) }
    func cancel() {}
}

let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 300_000
for _ in 0..<rounds {
    let upstream = Upstream()
    let handed = Mutex<Future<Void, Never>.Promise?>(nil)
    let done = DispatchSemaphore(value: 0)
    let sink = upstream.flatMap(maxPublishers: .max(1)) { _ in
        Future<Void, Never> { promise in handed.withLock { $0 = promise } }
    }.sink(receiveCompletion: { _ in done.signal() }, receiveValue: {})
    let fulfiller = Thread {
        var promise: Future<Void, Never>.Promise?
        while promise == nil { promise = handed.withLock { $0 } }
        promise!(.success(()))
    }
    while upstream.demand.load(ordering: .relaxed) == 0 {}
    _ = upstream.subscriber!.receive(0)
    fulfiller.start()
    upstream.subscriber!.receive(completion: .finished)
    done.wait()
    withExtendedLifetime(sink) {}
}
print("\(rounds) rounds, no crash")
