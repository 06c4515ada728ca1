import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The suite's own upstream, of the scenarios and the tests: emits `0..<count` then finishes,
/// respecting demand.
///
/// Trampolined: whoever finds the emitter idle emits in a loop while demand lasts, so a
/// synchronous `.more` never recurses (RS 3.3), and `request` may come from any thread. It
/// records demand violations (rule D2: more than one element outstanding; D5: `request(.none)`)
/// and cancels, and when it was first cancelled, so scenarios and tests can verify their outcome.
/// The per-element path is the scenarios' measured path: violations are recorded off it.
public final class CountingUpstream: Publisher, @unchecked Sendable {  // state behind `lock`
    public typealias Output = Int
    public typealias Failure = Never

    public let count: Int
    private let queue: DispatchQueue?
    private let lock = NSLock()
    private var conduits: [Conduit] = []

    /// - Parameter queue: if given, elements are emitted there, not on the requesting thread.
    public init(count: Int, deliverOn queue: DispatchQueue? = nil) {
        self.count = count
        self.queue = queue
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Int, S.Failure == Never {
        let conduit = Conduit(count: count, subscriber: subscriber, queue: queue)
        lock.withLock { conduits.append(conduit) }
        subscriber.receive(subscription: conduit)
    }

    /// The subscription handed to the (single) subscriber.
    public var conduit: Conduit? { lock.withLock { conduits.first } }

    public final class Conduit: Subscription, @unchecked Sendable {  // state behind `lock`
        private let lock = NSLock()
        private let count: Int
        private let queue: DispatchQueue?
        private var subscriber: AnySubscriber<Int, Never>?
        private var next = 0
        private var demand = 0
        private var emitting = false
        private var _violations: [String] = []
        private var _cancels = 0
        private var _emitted = 0
        private var _cancelledAt: UInt64 = 0

        init<S: Subscriber>(count: Int, subscriber: S, queue: DispatchQueue?) where S.Input == Int, S.Failure == Never {
            self.count = count
            self.queue = queue
            self.subscriber = AnySubscriber(subscriber)
        }

        /// The demand rules broken so far ("D2: outstanding demand 2", "D5: request(.none)").
        public var violations: [String] { lock.withLock { _violations } }
        public var cancels: Int { lock.withLock { _cancels } }
        public var emitted: Int { lock.withLock { _emitted } }
        /// When `cancel()` was first called (monotonic ns), or 0.
        public var cancelledAt: UInt64 { lock.withLock { _cancelledAt } }

        public func request(_ d: Subscribers.Demand) {
            let start: Bool = lock.withLock {
                add(d)
                if d == .none { violated("D5: request(.none)") }
                if emitting || subscriber == nil { return false }
                emitting = true
                return true
            }
            guard start else { return }
            if let queue { queue.async { self.emit() } } else { emit() }
        }

        private func add(_ d: Subscribers.Demand) {
            demand += d.max ?? (Int.max / 2)
            if demand > 1 { violated("D2: outstanding demand \(demand)") }
        }

        /// Off the per-element path, which the scenarios measure (called with `lock` held).
        @inline(never)
        private func violated(_ rule: @autoclosure () -> String) {
            _violations.append(rule())
        }

        private func emit() {
            while true {
                let step: (AnySubscriber<Int, Never>, Int?)? = lock.withLock {
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
                    _emitted += 1
                    return (s, next - 1)
                }
                guard let (s, value) = step else { return }
                guard let value else {
                    s.receive(completion: .finished)
                    return
                }
                let more = s.receive(value)
                if more != .none { lock.withLock { add(more) } }
            }
        }

        public func cancel() {
            let now = monotonicNanoseconds()
            lock.withLock {
                _cancels += 1
                if _cancelledAt == 0 { _cancelledAt = now }
                subscriber = nil
            }
        }
    }
}
