import Foundation
@preconcurrency import OpenCombine

/// A demand-respecting, thread-safe, trampolined upstream that emits `0..<count` then finishes.
///
/// `request` may come from any thread; whoever finds the emitter idle emits while demand lasts
/// (in a loop, never recursively), so a synchronous `.more` cannot grow the stack. It checks
/// rules D2 and D5 as it goes and records them as violations.
final class SequenceUpstream: Publisher, @unchecked Sendable {  // state behind `lock`
    typealias Output = Int
    typealias Failure = TestError

    let count: Int
    let queue: DispatchQueue?
    private let lock = NSLock()
    private var subscription: Conduit?

    /// - Parameter queue: if given, inputs are emitted there, not on the requesting thread.
    init(count: Int, deliverOn queue: DispatchQueue? = nil) {
        self.count = count
        self.queue = queue
    }

    func receive<S: Subscriber>(subscriber: S) where S.Input == Int, S.Failure == TestError {
        let conduit = Conduit(count: count, subscriber: AnySubscriber(subscriber), queue: queue)
        lock.withLock { subscription = conduit }
        subscriber.receive(subscription: conduit)
    }

    var conduit: Conduit? { lock.withLock { subscription } }

    final class Conduit: Subscription, @unchecked Sendable {  // state behind `lock`
        private let lock = NSLock()
        private let count: Int
        private let queue: DispatchQueue?
        private var subscriber: AnySubscriber<Int, TestError>?
        private var next = 0
        private var demand = 0
        private var emitting = false
        private(set) var maxOutstanding = 0
        private(set) var requestCalls = 0
        private(set) var cancelCalls = 0
        private(set) var violations: [String] = []
        private(set) var emitted = 0
        /// Deepest emission nesting seen (> 1 means the subscriber made us recurse).
        private(set) var maxDepth = 0
        private var depth = 0

        init(count: Int, subscriber: AnySubscriber<Int, TestError>, queue: DispatchQueue?) {
            self.count = count
            self.queue = queue
            self.subscriber = subscriber
        }

        var snapshot: (requests: Int, cancels: Int, emitted: Int, maxOutstanding: Int, violations: [String]) {
            lock.withLock { (requestCalls, cancelCalls, emitted, maxOutstanding, violations) }
        }
        var recursionDepth: Int { lock.withLock { maxDepth } }

        func request(_ d: Subscribers.Demand) {
            let start: Bool = lock.withLock {
                requestCalls += 1
                if d == .none { violations.append("D5: request(.none)") }
                add(d)
                if emitting || subscriber == nil { return false }
                emitting = true
                return true
            }
            guard start else { return }
            if let queue { queue.async { self.emit() } } else { emit() }
        }

        private func add(_ d: Subscribers.Demand) {
            demand += d.max ?? Int.max / 2
            maxOutstanding = Swift.max(maxOutstanding, demand)
            if demand > 1 { violations.append("D2: outstanding demand \(demand)") }
        }

        private func emit() {
            while true {
                let step: (AnySubscriber<Int, TestError>, Int?)? = lock.withLock {
                    guard let s = subscriber, demand > 0 || next == count else {
                        emitting = false
                        return nil
                    }
                    if next == count {
                        subscriber = nil
                        emitting = false
                        return (s, nil)
                    }
                    demand -= 1
                    next += 1
                    emitted += 1
                    depth += 1
                    maxDepth = Swift.max(maxDepth, depth)
                    return (s, next - 1)
                }
                guard let (s, value) = step else { return }
                guard let value else {
                    s.receive(completion: .finished)
                    return
                }
                let more = s.receive(value)
                lock.withLock {
                    depth -= 1
                    add(more)
                }
            }
        }

        func cancel() {
            lock.withLock {
                cancelCalls += 1
                subscriber = nil
            }
        }
    }
}
