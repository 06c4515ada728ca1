import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// What a design does around its call-outs: an upstream that calls back from another thread
/// inside `request` (C4, R4), a cancel that follows a re-entrant completion (C6), and a promise
/// that outlives every other reference to its subscriber (R1).
enum CallOutChecks {
    /// R4, C4: a first request that waits for cancel() on another thread stalls neither
    static func requestWaitingForCancelOnAnotherThread(design: SteppingDesign) {
        let s = Scripted(design, subscribe: false)
        nonisolated(unsafe) let subscriber = s.subscriber  // subscribers are thread-safe by contract
        let cancelReturned = Box<Bool?>(nil)
        s.upstream.onRequest = { _ in
            // An upstream that hands its first request to a worker, which cancels the subscriber,
            // and waits for the worker (bounded, so a design that stalls fails instead of hanging;
            // 2 s once failed a design that does not stall, beside a build on two busy cores, where
            // starting the worker thread alone can take seconds).
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                subscriber.cancel()
                done.signal()
            }
            cancelReturned.mutate { $0 = $0 ?? (done.wait(timeout: .now() + 6) == .success) }
        }
        subscriber.receive(subscription: s.upstream)
        expect(
            eventually { cancelReturned.value != nil },
            "the first request was never made (expected one, which waits for cancel())")
        expect(cancelReturned.value == true, "cancel() on the worker did not return while request waited for it")
        s.settle()
        expect(eventually { s.upstream.calls == [.request(.max(1)), .cancel] }, "\(s.upstream.calls)")
    }

    /// How many subscriptions ``blockedSteppersDoNotStall(design:)`` blocks at once: enough that
    /// a design running its steppers on a shared pool shows it (`actor-stream`: 423 to 600 of
    /// 600 began within 10 s, 997 of 1,000; of 300, all or all but one).
    static let blockedSteppers = 600

    /// R4: 600 steppers that each block until all 600 have begun, each subscription fed from
    /// its own thread: every one begins
    static func blockedSteppersDoNotStall(design: SteppingDesign) {
        let count = blockedSteppers
        let condition = NSCondition()
        let begun = Box(0)
        let deadline = Date(timeIntervalSinceNow: 10)  // then every stepper is let go, so none hangs
        let subscribers = (0..<count).map { _ in
            design.makeSubscriber { (event: StepEvent<Int, TestError>) in
                guard case .input(_, let promise) = event else { return }
                condition.lock()
                begun.mutate { $0 += 1 }
                condition.broadcast()
                while begun.value < count, condition.wait(until: deadline) {}
                condition.unlock()
                promise(.cancel)
            }
        }
        let upstreams = (0..<count).map { _ in RecordingSubscription() }
        let finished = DispatchGroup()
        for (subscriber, upstream) in zip(subscribers, upstreams) {
            nonisolated(unsafe) let subscriber = subscriber  // subscribers are thread-safe by contract
            finished.enter()
            let thread = Thread {
                subscriber.receive(subscription: upstream)
                _ = subscriber.receive(0)
                finished.leave()
            }
            thread.stackSize = 1 << 18
            thread.start()
        }
        expect(finished.wait(timeout: .now() + 20) == .success, "the feeding threads did not return")
        condition.lock()
        while begun.value < count, condition.wait(until: deadline) {}
        let ran = begun.value
        condition.unlock()
        expect(
            ran == count,
            "only \(ran) of \(count) blocked steppers ran within 10 s: the others waited for a thread the blocked ones held"
        )
        for (subscriber, upstream) in zip(subscribers, upstreams) {  // the late ones let go at once
            expect(eventually(timeout: 20) { upstream.calls.contains(.cancel) }, "\(upstream.calls)")
            settleDesign(subscriber)
        }
    }

    /// How the stepper asks to stop after upstream completed from inside its call.
    enum StopAfterCompletion: CaseIterable, CustomStringConvertible {
        case promiseCancel, subscriberCancel
        var description: String { self == .promiseCancel ? "promise(.cancel)" : "cancel()" }
    }

    /// C6: promise(.cancel) or cancel() after a re-entrant completion: nothing upstream, no completion
    static func cancelAfterReentrantCompletion(design: SteppingDesign) {
        for stop in StopAfterCompletion.allCases {
            let subscriberBox = Box<(any SteppingSubscriber<Int, TestError>)?>(nil)
            let s = Scripted(design) { probe, index, _ in
                subscriberBox.value?.receive(completion: .finished)  // upstream completes re-entrantly
                switch stop {
                case .promiseCancel: probe.fulfil(index, .cancel)
                case .subscriberCancel: subscriberBox.value?.cancel()
                }
            }
            subscriberBox.mutate { $0 = s.subscriber }
            s.send(0)
            s.settle()
            expect(s.probe.events == [.input(0)], "\(stop): the stepper asked to stop, yet got \(s.probe.events)")
            expect(s.upstream.calls == [.request(.max(1))], "\(stop): upstream completed, yet got \(s.upstream.calls)")
            expectEqual(s.probe.violations, [], "what the stepper saw wrong")
            subscriberBox.mutate { $0 = nil }  // break the cycle
        }
    }

    /// R1: a promise kept after the last reference to its subscriber still acts, then lets go
    static func keptPromiseOutlivesSubscriber(design: SteppingDesign) {
        final class Token: Sendable {}
        let upstream = RecordingSubscription()  // holds no reference to its subscriber
        let promises = Box<[StepPromise]>([])
        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            let subscriber: any SteppingSubscriber<Int, TestError> = design.makeSubscriber { event in
                withExtendedLifetime(token) {}  // the stepper alone holds the token
                if case .input(_, let promise) = event { promises.mutate { $0.append(promise) } }
            }
            subscriber.receive(subscription: upstream)
            _ = subscriber.receive(0)
            settleDesign(subscriber)
        }
        // Only the promise the stepper kept refers to the subscriber now.
        expectEqual(promises.value.count, 1, "promises the stepper kept")
        promises.value.first?(.cancel)
        expect(
            eventually { upstream.calls == [.request(.max(1)), .cancel] },
            "promise(.cancel) after the subscriber was dropped: upstream got \(upstream.calls)")
        // The stale promise stays with the test; the subscriber has let go of the stepper.
        expect(eventually { weakToken == nil }, "the stepper is still retained")
    }
}
