import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
import Synchronization

// Torture cases about demand: storms, slow and re-entrant requests, upstreams that ignore demand.

func runStorm(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
    var violations: [String] = []
    for round in 0..<progress.rounds(of: .storm64) {
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
            var random = progress.generator(round: round, thread: i)
            for step in 0..<300 {
                let count = stepper.state.value.promises.count
                guard count > 0 else { continue }
                switch (i + step) % 8 {
                case 0 where count > 1:
                    stepper.state.value.promises[Int.random(in: 0..<count - 1, using: &random)](.more)  // stale
                case 1: stepper.state.value.promises[Int.random(in: 0..<count, using: &random)](.cancel)
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
        if progress.endRound(violations: violations.count) { break }
    }
    return violations
}

func runSlowRequest(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
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

func runReentrantRequest(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
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

func runDemandIgnoring(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
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
