import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
import Synchronization

/// The upstream of every path driver: one subscription object for all its subscribers, which
/// counts what reaches it (requests, cancels) and what reaches the steppers (inputs, completions),
/// and signals each.
final class PathUpstream: Subscription, @unchecked Sendable {  // counters atomic; `semaphore` is thread-safe
    struct Totals: Equatable, CustomStringConvertible {
        var requests, inputs, cancels, completions, outOfOrder: Int
        var description: String {
            "\(requests) requests, \(inputs) inputs, \(cancels) cancels, \(completions) completions"
                + (outOfOrder > 0 ? ", \(outOfOrder) inputs out of order" : "")
        }
    }

    private let requests = Atomic<Int>(0)
    private let inputs = Atomic<Int>(0)
    private let cancels = Atomic<Int>(0)
    private let completions = Atomic<Int>(0)
    private let outOfOrder = Atomic<Int>(0)
    private let semaphore = DispatchSemaphore(value: 0)

    func request(_ demand: Subscribers.Demand) {
        requests.add(demand.max ?? 1_000_000, ordering: .relaxed)
        semaphore.signal()
    }

    func cancel() {
        cancels.add(1, ordering: .relaxed)
        semaphore.signal()
    }

    /// Demand returned from `receive(_:)` counts as requested (no effect to wait for).
    func credit(returned demand: Subscribers.Demand) {
        requests.add(demand.max ?? 1_000_000, ordering: .relaxed)
    }

    /// An input reached the stepper: inputs of one subscriber are 0, 1, 2, …; of a new one, 0.
    func record(input value: Int) {
        let seen = inputs.add(1, ordering: .relaxed).oldValue
        if value != 0 && value != seen { outOfOrder.add(1, ordering: .relaxed) }
        semaphore.signal()
    }

    func recordCompletion() {
        completions.add(1, ordering: .relaxed)
        semaphore.signal()
    }

    /// Waits for `count` more effects (bounded: a missing effect fails the driver).
    func await(_ count: Int, _ what: @autoclosure () -> String) throws {
        for _ in 0..<count {
            guard semaphore.wait(timeout: .now() + 10) == .success else {
                throw ScenarioFailure("\(what()): not seen within 10 s (so far \(totals))")
            }
        }
    }

    var totals: Totals {
        Totals(
            requests: requests.load(ordering: .acquiring), inputs: inputs.load(ordering: .acquiring),
            cancels: cancels.load(ordering: .acquiring), completions: completions.load(ordering: .acquiring),
            outOfOrder: outOfOrder.load(ordering: .acquiring))
    }
}

/// What a path's stepper shares with the driver: the promise it kept, the subscriber it calls
/// back. Written before an effect is signalled and read after it was awaited (or by one thread).
final class PathSlot: @unchecked Sendable {
    var promise: StepPromise?
    var subscriber: (any Subscriber<Int, Never>)?
    var cancellable: (any Cancellable)?

    /// `deferred-more`'s `.more` after the stepper returned; the floor requests directly.
    func fulfil(subject: Subject, upstream: PathUpstream) {
        if subject == .floor { upstream.request(.max(1)) } else { promise?(.more) }
    }
}

/// The floor of a path: the same driver and upstream around a plain subscriber, with no stepper
/// and no promise. It returns `.max(1)` from `receive(_:)` in `sync-more`, `.none` in
/// `deferred-more` (the driver then requests), and counts inputs and completions as a stepper
/// would.
final class PlainSubscriber: Subscriber, @unchecked Sendable {  // called serially by the driver
    typealias Input = Int
    typealias Failure = Never
    let path: StepPath
    let upstream: PathUpstream
    let combineIdentifier = CombineIdentifier()

    init(path: StepPath, upstream: PathUpstream) {
        self.path = path
        self.upstream = upstream
    }

    func receive(subscription: any Subscription) { subscription.request(.max(1)) }

    func receive(_ input: Int) -> Subscribers.Demand {
        upstream.record(input: input)
        return path == .syncMore ? .max(1) : .none
    }

    func receive(completion: Subscribers.Completion<Never>) { upstream.recordCompletion() }
}

extension Optional {
    func unwrapped(_ message: @autoclosure () -> String) throws -> Wrapped {
        guard let value = self else { throw ScenarioFailure(message()) }
        return value
    }
}
