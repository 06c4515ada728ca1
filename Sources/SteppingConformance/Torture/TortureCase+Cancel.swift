import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
import Synchronization

// Torture cases about cancel(): inside a request, right after subscribing.

func runCancelInsideRequest(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
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

/// Odd rounds subscribe through OpenCombine (`step` on a `PassthroughSubject`, its calls seen by
/// `handleEvents`); even rounds hand the subscriber a recording subscription directly. The
/// second is needed: once cancelled, OpenCombine's `handleEvents` no longer reports requests, so
/// a design that requests from a worker after `cancel()` returned went unseen through it.
func runCancelAfterSubscribe(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
    var violations: [String] = []
    for round in 0..<progress.rounds(of: .cancelAfterSubscribe) {
        progress.round.store(round, ordering: .relaxed)
        if round % 2 == 0 {
            let upstream = RecordingSubscription()
            let stepper = CheckingStepper()
            let subscriber = design.makeSubscriber(stepper: stepper.stepper)
            subscriber.receive(subscription: upstream)
            subscriber.cancel()
            let returned = upstream.calls.count
            // No input: one sent after cancel() is an upstream breaking RS 1.1 (C5's business),
            // and some peers trap on it; the question here is only whether demand follows.
            usleep(2_000)  // give an asynchronous design time to misbehave
            SteppingDesign.waitUntilIdle(subscriber)  // and one that says when it is idle, all it needs
            let late = upstream.calls.dropFirst(returned)
            if late.contains(where: { if case .request = $0 { true } else { false } }) {
                violations.append(
                    "round \(round): request after cancel() returned (C7): upstream got \(upstream.calls), the last \(late.count) after it returned"
                )
            }
            violations += stepper.state.value.violations
            if progress.endRound(violations: violations.count) { break }
            continue
        }
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
        if progress.endRound(violations: violations.count) { break }
    }
    return violations
}

/// A weak reference that can be shared with Sendable closures.
