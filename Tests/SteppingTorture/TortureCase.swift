import Foundation
@preconcurrency import OpenCombine
import Stepping
import Synchronization
import TestSupport

/// The hostile cases. Each returns the violations it saw (empty: the design held).
enum TortureCase: String, CaseIterable {
    /// 64 threads fulfil the latest promise, call stale promises and cancel, against an upstream
    /// that delivers on its own queue (S1–S3, C4).
    case storm64 = "storm-64"
    /// `request` is slow and delivers the next input from another thread; every promise is
    /// fulfilled on a fresh thread, so many `request` calls are in flight at once (R4).
    case slowRequest = "slow-request"
    /// `request` delivers the next input re-entrantly, from inside `request` (S1, order).
    case reentrantRequest = "reentrant-request"
    /// `cancel()` is called from inside `request` (C4, no deadlock).
    case cancelInsideRequest = "cancel-inside-request"
    /// `publisher.step { … }.cancel()` right after subscribing, many times (C7: no request after
    /// cancel returned).
    case cancelAfterSubscribe = "cancel-after-subscribe"
    /// Something only the stepper owns calls the promise and `cancel()` from its `deinit`, when
    /// the subscriber lets the stepper go after cancel, promise(.cancel) and completion (R3).
    case releaseCallback = "release-callback"
    /// The stepper completes the `PassthroughSubject` it is subscribed to, from inside its call
    /// (C6), with and without a `.more` in the same call.
    case reentrantCompletion = "reentrant-completion"
    /// An upstream that ignores demand: inputs with no demand outstanding (S1, C5).
    case demandIgnoring = "demand-ignoring"
    /// An upstream that completes twice, and sends after completing (C1, C5).
    case doubleCompletion = "double-completion"

    func run(_ design: SteppingDesign, _ progress: Progress) -> [String] {
        switch self {
        case .storm64: runStorm(design, progress)
        case .slowRequest: runSlowRequest(design, progress)
        case .reentrantRequest: runReentrantRequest(design, progress)
        case .cancelInsideRequest: runCancelInsideRequest(design, progress)
        case .cancelAfterSubscribe: runCancelAfterSubscribe(design, progress)
        case .releaseCallback: runReleaseCallback(design, progress)
        case .reentrantCompletion: runReentrantCompletion(design, progress)
        case .demandIgnoring: runDemandIgnoring(design, progress)
        case .doubleCompletion: runDoubleCompletion(design, progress)
        }
    }
}

// MARK: - the cases

/// Sends `value` as a well-behaved upstream would: demand returned from `receive(_:)` (a
/// `.more` that came while the stepper was still running) counts like a request.
private func deliver(
    _ value: Int, to subscriber: any SteppingSubscriber<Int, TestError>, from upstream: HookedSubscription
) {
    if subscriber.receive(value) != .none { upstream.request(.max(1)) }
}

private func runStorm(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    var violations: [String] = []
    for round in 0..<10 {
        progress.round.store(round, ordering: .relaxed)
        let stepper = CheckingStepper()
        let subscriber = design.makeSubscriber(stepper: stepper.stepper)
        let upstream = HookedSubscription()
        let queue = DispatchQueue(label: "torture.upstream")
        let sent = Atomic<Int>(0)
        nonisolated(unsafe) let target = subscriber  // subscribers are thread-safe by contract
        upstream.onRequest = {
            queue.async { deliver(sent.add(1, ordering: .relaxed).oldValue, to: target, from: upstream) }
        }
        subscriber.receive(subscription: upstream)
        let cancelledAt = Atomic<Int>(-1)
        onThreads(64) { i in
            for step in 0..<300 {
                let count = stepper.state.value.promises.count
                guard count > 0 else { continue }
                switch (i + step) % 8 {
                case 0 where count > 1: stepper.state.value.promises[Int.random(in: 0..<count - 1)](.more)  // stale
                case 1: stepper.state.value.promises[Int.random(in: 0..<count)](.cancel)
                case 2 where i == 63 && step == 250:
                    target.cancel()
                    _ = cancelledAt.compareExchange(
                        expected: -1, desired: stepper.state.value.inputs.count,
                        ordering: .sequentiallyConsistent)
                default: stepper.fulfil(count - 1, .more)
                }
            }
        }
        target.cancel()
        let seenAtCancel = cancelledAt.load(ordering: .sequentiallyConsistent)
        SteppingDesign.waitUntilIdle(subscriber)
        queue.sync {}
        SteppingDesign.waitUntilIdle(subscriber)
        let state = stepper.state.value
        violations += state.violations.map { "round \(round): \($0)" }
        if upstream.cancels != 1 {
            violations.append("round \(round): upstream cancelled \(upstream.cancels) times (C4: once)")
        }
        if seenAtCancel >= 0, state.inputs.count > seenAtCancel + 1 {
            violations.append(
                "round \(round): \(state.inputs.count - seenAtCancel) inputs after cancel() returned (C4: at most 1)")
        }
        if state.inputs != Array(0..<state.inputs.count) { violations.append("round \(round): inputs out of order") }
        if !violations.isEmpty { break }
    }
    return violations
}

private func runSlowRequest(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    let total = 200
    let stepper = CheckingStepper { stepper, index in
        Thread.detachNewThread {  // a fresh thread per promise, after the stepper returned
            usleep(300)
            stepper.fulfil(index, .more)
        }
    }
    let subscriber = design.makeSubscriber(stepper: stepper.stepper)
    nonisolated(unsafe) let target = subscriber
    let upstream = HookedSubscription()
    let queue = DispatchQueue(label: "torture.upstream")
    let sent = Atomic<Int>(0)
    let finished = DispatchSemaphore(value: 0)
    // Demand returned from receive(_:) (a .more that won the race with the stepper's return)
    // counts like a request.
    @Sendable func deliver() {
        let next = sent.add(1, ordering: .relaxed).oldValue
        queue.async {
            if next < total {
                if target.receive(next) != .none { deliver() }
            } else if next == total {
                target.receive(completion: .finished)
                finished.signal()
            }
        }
    }
    upstream.onRequest = {
        deliver()
        usleep(20_000)  // slow: RS 3.4 only asks request to be quick
    }
    subscriber.receive(subscription: upstream)
    var violations: [String] = []
    if finished.wait(timeout: .now() + 25) != .success {
        violations.append("stalled after \(stepper.state.value.inputs.count) of \(total) inputs")
    }
    SteppingDesign.waitUntilIdle(subscriber)
    let state = stepper.state.value
    violations += state.violations
    if state.inputs != Array(0..<total) {
        violations.append(
            "inputs: \(state.inputs.count) of \(total), in order: \(state.inputs == Array(0..<state.inputs.count))")
    }
    if state.completions != 1 { violations.append("C1: \(state.completions) completions") }
    return violations
}

private func runReentrantRequest(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    let total = 500
    let stepper = CheckingStepper()
    let subscriber = design.makeSubscriber(stepper: stepper.stepper)
    nonisolated(unsafe) let target = subscriber
    let upstream = HookedSubscription()
    let sent = Atomic<Int>(0)
    upstream.onRequest = {  // delivers from inside request (no trampoline)
        let next = sent.add(1, ordering: .relaxed).oldValue
        if next < total {
            deliver(next, to: target, from: upstream)
        } else if next == total {
            target.receive(completion: .finished)
        }
    }
    subscriber.receive(subscription: upstream)
    for i in 0..<total {  // .more after the stepper returned: request → receive, re-entrantly
        guard eventually(timeout: 5, { stepper.state.value.inputs.count == i + 1 }) else {
            return ["stalled at input \(i)"] + stepper.state.value.violations
        }
        stepper.fulfil(i, .more)
    }
    SteppingDesign.waitUntilIdle(subscriber)
    let state = stepper.state.value
    var violations = state.violations
    if state.inputs != Array(0..<total) {
        violations.append("inputs out of order or lost (\(state.inputs.count) of \(total))")
    }
    if !eventually({ stepper.state.value.completions == 1 }) {
        violations.append("C1: \(stepper.state.value.completions) completions")
    }
    return violations
}

private func runCancelInsideRequest(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    var violations: [String] = []
    for round in 0..<50 {
        progress.round.store(round, ordering: .relaxed)
        let stepper = CheckingStepper()
        let subscriber = design.makeSubscriber(stepper: stepper.stepper)
        nonisolated(unsafe) let target = subscriber
        let upstream = HookedSubscription()
        let cancelAt = round % 5 + 1
        let requests = Atomic<Int>(0)
        upstream.onRequest = {
            let n = requests.add(1, ordering: .relaxed).newValue
            if n == cancelAt {
                target.cancel()
            } else {
                DispatchQueue.global().async { deliver(n, to: target, from: upstream) }
            }
        }
        subscriber.receive(subscription: upstream)
        // Promises fulfilled from outside, until the cancel lands.
        eventually {
            let count = stepper.state.value.promises.count
            if count > 0 { stepper.fulfil(count - 1, .more) }
            return upstream.cancels > 0
        }
        SteppingDesign.waitUntilIdle(subscriber)
        eventually { upstream.cancels > 0 }
        violations += stepper.state.value.violations
        if upstream.cancels != 1 { violations.append("round \(round): upstream cancelled \(upstream.cancels) times") }
        if !violations.isEmpty { break }
    }
    return violations
}

private func runCancelAfterSubscribe(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    var violations: [String] = []
    for round in 0..<300 {
        progress.round.store(round, ordering: .relaxed)
        let subject = PassthroughSubject<Int, TestError>()
        let calls = Box<[String]>([])
        let stepper = CheckingStepper()
        let cancellable =
            subject
            .handleEvents(
                receiveCancel: { calls.mutate { $0.append("cancel") } },
                receiveRequest: { _ in calls.mutate { $0.append("request") } }
            )
            .step(design: design, with: stepper.stepper)
        cancellable.cancel()
        calls.mutate { $0.append("cancel() returned") }
        subject.send(1)
        usleep(2_000)  // give an asynchronous design time to misbehave
        let log = calls.value
        let returned = log.firstIndex(of: "cancel() returned")!
        if log[returned...].contains("request") {
            violations.append("round \(round): request after cancel() returned (C7): \(log)")
        }
        violations += stepper.state.value.violations
        if !violations.isEmpty { break }
    }
    return violations
}

/// A weak reference that can be shared with Sendable closures.
final class WeakBox: @unchecked Sendable {  // set before it is shared; read only after
    weak var object: AnyObject?
}

/// Owned by the stepper alone; calls back into the subscriber when it is released.
private final class ReleaseProbe: @unchecked Sendable {  // `promise` behind its lock
    let promise = Box<StepPromise?>(nil)
    let subscriber: WeakBox
    init(subscriber: WeakBox) { self.subscriber = subscriber }
    deinit {
        promise.value?(.more)
        promise.value?(.cancel)
        (subscriber.object as? any Cancellable)?.cancel()
    }
}

private func runReleaseCallback(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    var violations: [String] = []
    for (round, ending) in ["cancel()", "promise(.cancel)", "completion"].enumerated() {
        progress.round.store(round, ordering: .relaxed)
        let watch = WeakBox(), subscriberRef = WeakBox()
        let kept = Box<StepPromise?>(nil)
        let subscriber: any SteppingSubscriber<Int, TestError> = {
            let probe = ReleaseProbe(subscriber: subscriberRef)
            watch.object = probe
            return design.makeSubscriber { event in
                if case .input(_, let promise) = event {
                    probe.promise.mutate { $0 = promise }
                    kept.mutate { $0 = promise }
                }
            }
        }()
        subscriberRef.object = subscriber
        let upstream = HookedSubscription()
        subscriber.receive(subscription: upstream)
        _ = subscriber.receive(1)
        SteppingDesign.waitUntilIdle(subscriber)
        switch ending {
        case "cancel()": subscriber.cancel()
        case "promise(.cancel)": kept.value?(.cancel)
        default: subscriber.receive(completion: .finished)
        }
        SteppingDesign.waitUntilIdle(subscriber)
        if !eventually({ watch.object == nil }) { violations.append("\(ending): the stepper was not released (R1)") }
        withExtendedLifetime(subscriber) {}
    }
    return violations
}

private func runReentrantCompletion(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    var violations: [String] = []
    for (round, moreToo) in [false, true].enumerated() {
        progress.round.store(round, ordering: .relaxed)
        let subject = PassthroughSubject<Int, TestError>()
        let requests = Box(0)
        let watch = WeakBox()
        let stepper = CheckingStepper { stepper, index in
            subject.send(completion: .finished)  // OpenCombine delivers it re-entrantly
            if moreToo { stepper.fulfil(index, .more) }
        }
        watch.object = stepper
        let cancellable =
            subject
            .handleEvents(receiveRequest: { _ in requests.mutate { $0 += 1 } })
            .step(design: design, with: stepper.stepper)
        eventually { requests.value == 1 }  // a subject drops values sent before the demand arrives
        subject.send(1)
        let label = moreToo ? "completion then .more in the same call" : "completion from inside the stepper"
        if !eventually({ stepper.state.value.completions == 1 }) {
            violations.append(
                "\(label): C6: the stepper saw \(stepper.state.value.completions) completions, expected 1")
        }
        violations += stepper.state.value.violations.map { "\(label): \($0)" }
        if stepper.state.value.inputs != [1] { violations.append("\(label): inputs \(stepper.state.value.inputs)") }
        if requests.value != 1 {
            violations.append("\(label): \(requests.value) requests upstream (only the first expected)")
        }
        withExtendedLifetime(cancellable) {}
    }
    return violations
}

private func runDemandIgnoring(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    let stepper = CheckingStepper()
    let subscriber = design.makeSubscriber(stepper: stepper.stepper)
    let upstream = HookedSubscription()
    subscriber.receive(subscription: upstream)
    _ = subscriber.receive(1)  // the one input demanded
    SteppingDesign.waitUntilIdle(subscriber)
    _ = subscriber.receive(2)  // no demand outstanding: must not reach the stepper
    _ = subscriber.receive(3)
    SteppingDesign.waitUntilIdle(subscriber)
    var violations = stepper.state.value.violations
    if stepper.state.value.inputs != [1] {
        violations.append("inputs sent with no demand reached the stepper: \(stepper.state.value.inputs)")
    }
    stepper.fulfil(0, .more)
    SteppingDesign.waitUntilIdle(subscriber)
    _ = subscriber.receive(4)
    SteppingDesign.waitUntilIdle(subscriber)
    if !eventually({ stepper.state.value.inputs.last == 4 }) {
        violations.append("after .more the next input was not delivered: \(stepper.state.value.inputs)")
    }
    return violations + stepper.state.value.violations.filter { !violations.contains($0) }
}

private func runDoubleCompletion(_ design: SteppingDesign, _ progress: Progress) -> [String] {
    var violations: [String] = []
    for (round, promiseFirst) in [false, true].enumerated() {
        progress.round.store(round, ordering: .relaxed)
        let stepper = CheckingStepper()
        let subscriber = design.makeSubscriber(stepper: stepper.stepper)
        let upstream = HookedSubscription()
        subscriber.receive(subscription: upstream)
        _ = subscriber.receive(1)
        SteppingDesign.waitUntilIdle(subscriber)
        if promiseFirst { stepper.fulfil(0, .more) }
        subscriber.receive(completion: .finished)
        subscriber.receive(completion: .failure(TestError()))
        _ = subscriber.receive(2)
        subscriber.receive(completion: .finished)
        SteppingDesign.waitUntilIdle(subscriber)
        eventually { stepper.state.value.completions > 0 }
        let state = stepper.state.value
        violations += state.violations
        if state.completions != 1 { violations.append("C1: \(state.completions) completions") }
        if state.inputs != [1] { violations.append("inputs after completion reached the stepper: \(state.inputs)") }
        if upstream.cancels != 0 { violations.append("C2: upstream cancelled after completing") }
    }
    return violations
}
