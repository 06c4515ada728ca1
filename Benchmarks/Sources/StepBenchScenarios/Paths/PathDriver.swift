import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
import Synchronization

/// Drives one ``StepPath``: plays upstream itself (one ``PathUpstream`` for every subscription),
/// waits for each event's effects, and verifies the totals at the end.
///
/// Waiting: every effect (a request, a cancel, an input or a completion reaching the stepper)
/// signals one semaphore, and the driver waits exactly once per effect it expects. A
/// synchronous design has produced the effect before the wait, which then returns at once; for
/// an actor the driver parks until the actor's thread produced it. No thread polls.
struct PathDriver {
    let path: StepPath
    let subject: Subject
    let events: Int
    let upstream = PathUpstream()
    /// What the stepper of the current subscriber needs from the driver.
    let slot = PathSlot()

    var name: String { "\(path.rawValue) \(subject)" }

    /// Drives the events inside a window labelled `label`, or, with no label, outside any
    /// window (a warm-up: the first use of metadata, caches and lazily built objects then
    /// lands in no window).
    func run(label: String?) throws -> UInt64 {
        var meter = Meter()
        switch path {
        case .syncMore, .deferredMore:
            let (subscriber, _) = makeSubscriber()
            try subscribe(subscriber)
            SteppingDesign.waitUntilIdle(subscriber as AnyObject)  // an actor's set-up stays out of the window
            try meter.start()
            try window(label) {
                for i in 0..<events { try element(i, subscriber) }
            }
            try meter.stop()
            withExtendedLifetime(subscriber) {}
            try check(requests: events + 1, inputs: events, cancels: 0, completions: 0)
        case .stalePromise:
            let (subscriber, _) = makeSubscriber()
            try subscribe(subscriber)
            try element(0, subscriber, keep: true)  // promise 0, fulfilled with .more
            let stale = try slot.promise.unwrapped("\(name): no promise kept")
            _ = subscriber.receive(1)
            try upstream.await(1, "\(name): input 1")
            // A design one input ahead (rule D2 declared broken) asks for input 2 as it takes
            // input 1, on a thread of its own: the driver waits for that request, which otherwise
            // could land after the count below (a quiet 2 ms proves nothing under callgrind) and
            // read as the stale calls' doing. One that is ahead only at times cannot be waited for.
            let ahead = subject.design?.traits.knownIssue(.d2).map { !$0.isIntermittent } ?? false
            if ahead {
                try upstream.await(1, "\(name): the request for input 2 ahead of the promise (D2 declared broken)")
            }
            SteppingDesign.waitUntilIdle(subscriber as AnyObject)
            let before = upstream.totals
            try verify(
                before.requests == (ahead ? 3 : 2) || (before.requests == 3 && !follows(.d2)),
                "\(name): expected \(ahead ? 3 : 2) requests before the stale calls, saw \(before)")
            try meter.start()
            window(label) {
                for _ in 0..<events { stale(.more) }
            }
            try meter.stop()
            SteppingDesign.waitUntilIdle(subscriber as AnyObject)
            try check(requests: before.requests, inputs: 2, cancels: 0, completions: 0)  // the stale calls did nothing
        default:
            try meter.start()
            try window(label) {
                for _ in 0..<events { try subscription() }
            }
            try meter.stop()
            let (requests, inputs, cancels, completions) = perSubscription
            try check(
                requests: requests * events, inputs: inputs * events, cancels: cancels * events,
                completions: completions * events)
        }
        return meter.allocations
    }

    private func window(_ label: String?, _ body: () throws -> Void) rethrows {
        if let label { try MeasuredWindow.run(label: label, body) } else { try body() }
    }

    /// One element of `sync-more` or `deferred-more`: input `i`, then its `.more`.
    private func element(_ i: Int, _ subscriber: any Subscriber<Int, Never>, keep: Bool = false) throws {
        let demand = subscriber.receive(i)
        try upstream.await(1, "\(name): input \(i)")
        if path == .deferredMore && !keep {
            slot.fulfil(subject: subject, upstream: upstream)
        }
        if demand == .none {
            try upstream.await(1, "\(name): the request after input \(i)")
        } else {
            upstream.credit(returned: demand)
        }
    }

    /// Effects of one subscription of each per-subscription path: requests, inputs, cancels,
    /// completions reaching the stepper.
    private var perSubscription: (Int, Int, Int, Int) {
        switch path {
        case .promiseCancel, .cancelInStepper: (1, 1, 1, 0)
        case .cancelUnsubscribed: (0, 0, 1, 0)
        case .cancelSubscribed: (1, 0, 1, 0)
        case .cancelAfterCompletion, .subscribeComplete: (1, 0, 0, 1)
        case .reentrantCompletion: (1, 1, 0, 1)
        case .syncMore, .deferredMore, .stalePromise: (0, 0, 0, 0)
        }
    }

    /// One subscription of a per-subscription path, from a new subscriber to its end.
    private func subscription() throws {
        let (subscriber, cancellable) = makeSubscriber()
        switch path {
        case .cancelUnsubscribed:
            cancellable?.cancel()
            subscriber.receive(subscription: upstream)
            try upstream.await(1, "\(name): the late subscription's cancel")
        case .cancelSubscribed:
            try subscribe(subscriber)
            cancellable?.cancel()
            try upstream.await(1, "\(name): cancel")
        case .promiseCancel:
            try subscribe(subscriber)
            _ = subscriber.receive(0)
            try upstream.await(1, "\(name): input")
            (try slot.promise.unwrapped("\(name): no promise kept"))(.cancel)
            try upstream.await(1, "\(name): the promise's cancel")
        case .cancelInStepper, .reentrantCompletion:
            (slot.subscriber, slot.cancellable) = (subscriber, cancellable)
            try subscribe(subscriber)
            _ = subscriber.receive(0)
            try upstream.await(2, "\(name): input and its \(path == .cancelInStepper ? "cancel" : "completion")")
            (slot.subscriber, slot.cancellable) = (nil, nil)
        case .cancelAfterCompletion, .subscribeComplete:
            try subscribe(subscriber)
            subscriber.receive(completion: .finished)
            try upstream.await(1, "\(name): completion")
            if path == .cancelAfterCompletion { cancellable?.cancel() }
        case .syncMore, .deferredMore, .stalePromise:
            break
        }
        slot.promise = nil
    }

    private func subscribe(_ subscriber: any Subscriber<Int, Never>) throws {
        subscriber.receive(subscription: upstream)
        try upstream.await(1, "\(name): the first request")
    }

    /// A new subscriber of `subject` (a ``PlainSubscriber`` for the floor), and the same object
    /// as a `Cancellable` (nil for the floor).
    private func makeSubscriber() -> (any Subscriber<Int, Never>, (any Cancellable)?) {
        let (path, upstream, slot) = (self.path, self.upstream, self.slot)
        // Each stepper a closure literal at the call: converting one closure value to the
        // designs' generic stepper type would add a reabstraction thunk to every event.
        let subscriber: any SteppingSubscriber<Int, Never>
        switch subject {
        case .floor: return (PlainSubscriber(path: path, upstream: upstream), nil)
        case .floorStep: subscriber = FloorStep.makeSubscriber { react(path, upstream, slot, $0) }
        case .design(let design): subscriber = design.makeSubscriber { react(path, upstream, slot, $0) }
        case .foreign(let name): preconditionFailure("path driver: '\(name)' is not a design of this process")
        }
        return (subscriber, subscriber)
    }

    /// Whether the subject follows `rule` (declares no known issue of it).
    private func follows(_ rule: SteppingRule) -> Bool {
        subject.design.map { $0.traits.knownIssue(rule) == nil } ?? true
    }

    private func check(requests: Int, inputs: Int, cancels: Int, completions: Int) throws {
        let seen = upstream.totals
        let expected = PathUpstream.Totals(
            requests: requests, inputs: inputs, cancels: cancels, completions: completions, outOfOrder: 0)
        try verify(seen == expected, "\(name): expected \(expected), saw \(seen)")
    }
}

/// What a path's stepper does with each event.
@inline(__always)
private func react(_ path: StepPath, _ upstream: PathUpstream, _ slot: PathSlot, _ event: StepEvent<Int, Never>) {
    switch event {
    case .input(let value, let promise):
        // The reaction first: the driver may act on the promise as soon as it sees the input.
        defer { upstream.record(input: value) }
        switch path {
        case .syncMore: promise(.more)
        case .stalePromise: if value == 0 { slot.promise = promise; promise(.more) }
        case .cancelInStepper: slot.cancellable?.cancel()
        case .reentrantCompletion: slot.subscriber?.receive(completion: .finished)
        default: slot.promise = promise
        }
    case .completion:
        upstream.recordCompletion()
    }
}
