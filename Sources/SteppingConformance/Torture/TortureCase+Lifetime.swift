import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
import Synchronization

// Torture cases about lifetimes and completions: releases in call-outs, re-entrant and double completions.

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

func runReleaseCallback(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
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

func runReentrantCompletion(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
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

func runDoubleCompletion(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
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
