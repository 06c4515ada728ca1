import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// Rules C1–C5 and R1 of CONFORMANCE.md, for every design.
enum CompletionChecks {
    /// C1: completion is delivered exactly once, with no demand or an unfulfilled promise
    static func completionDeliveredExactlyOnce(design: SteppingDesign) {
        // with demand outstanding, no input yet
        let a = Scripted(design)
        a.complete(.failure(TestError(code: 7)))
        a.complete(.finished)
        expectEqual(a.probe.events, [.failure(TestError(code: 7))], "the stepper's events")
        // while the promise is unfulfilled (no demand outstanding)
        let b = Scripted(design)
        b.send(0)
        b.complete()
        b.complete()
        expectEqual(b.probe.events, [.input(0), .finished], "the stepper's events")
        // after the promise said .more
        let c = Scripted(design) { probe, index, _ in probe.fulfil(index, .more) }
        c.send(0)
        c.complete()
        expectEqual(c.probe.events, [.input(0), .finished], "the stepper's events")
        expectEqual(a.probe.violations + b.probe.violations + c.probe.violations, [], "what the stepper saw wrong")
    }

    /// C2: no request or cancel upstream while handling a completion
    static func noUpstreamCallsDuringCompletion(design: SteppingDesign) {
        let s = Scripted(design)
        s.send(0)
        nonisolated(unsafe) let subscriber = s.subscriber  // subscribers are thread-safe by contract
        s.probe.onCompletion = { [probe = s.probe] in
            probe.fulfil(0, .more)
            probe.fulfil(0, .cancel)
            subscriber.cancel()
        }
        let before = s.upstream.calls
        s.complete()
        expectEqual(s.probe.completions, 1, "completions the stepper got")
        expectEqual(s.upstream.calls, before, "upstream's calls")
    }

    /// C3: a second subscription is cancelled; the first keeps working
    static func secondSubscriptionIsCancelled(design: SteppingDesign) {
        let s = Scripted(design)
        let second = RecordingSubscription(name: "second")
        s.subscriber.receive(subscription: second)
        s.settle()
        expectSoon({ second.calls }, equals: [.cancel], "the second subscription's calls")
        s.send(0)
        s.probe.fulfil(0, .more)
        s.settle()
        expectSoon({ s.upstream.calls }, equals: [.request(.max(1)), .request(.max(1))], "upstream's calls")
        expectEqual(s.probe.inputs, [0], "the stepper's inputs")
        // a subscription arriving after cancel is cancelled too
        s.cancel()
        let third = RecordingSubscription(name: "third")
        s.subscriber.receive(subscription: third)
        s.settle()
        expectSoon({ third.calls }, equals: [.cancel], "the calls of a subscription that came after cancel()")
        expectEqual(second.calls, [.cancel], "the second subscription's calls")
    }

    /// C4: cancel from many threads cancels upstream once; nothing reaches the stepper after
    static func cancelIsIdempotentAndFinal(design: SteppingDesign) {
        let s = Scripted(design)
        s.send(0)
        nonisolated(unsafe) let subscriber = s.subscriber  // subscribers are thread-safe by contract
        let group = DispatchGroup()
        for _ in 0..<8 {
            DispatchQueue.global().async(group: group) { subscriber.cancel() }
        }
        expectEqual(group.wait(timeout: .now() + 10), .success, "the 8 cancel() calls")
        s.cancel()
        s.probe.fulfil(0, .more)
        s.settle()  // upstream sends once the request has reached it (an actor requests on its own)
        s.send(1)
        s.complete()
        expectEqual(s.upstream.calls, [.request(.max(1)), .cancel], "upstream's calls")
        expectEqual(s.probe.events, [.input(0)], "the stepper's events")
        // cancel before the subscription arrives: the late subscription is cancelled
        let early = Scripted(design, subscribe: false)
        early.cancel()
        early.subscriber.receive(subscription: early.upstream)
        early.settle()
        expectSoon({ early.upstream.calls }, equals: [.cancel], "upstream's calls")
        expectEqual(early.probe.events, [], "the stepper's events")
    }

    /// C5: inputs and completions before subscription, after completion or after cancel are ignored
    static func misbehavingUpstreamIsIgnored(design: SteppingDesign) {
        let before = Scripted(design, subscribe: false)
        expectEqual(before.send(0), .none, "demand returned from receive(_:)")
        before.complete()
        expectEqual(before.probe.events, [], "the stepper's events")
        before.subscriber.receive(subscription: before.upstream)
        before.send(1)
        expectEqual(before.probe.events, [.input(1)], "the stepper's events")

        let afterCompletion = Scripted(design)
        afterCompletion.complete()
        expectEqual(afterCompletion.send(2), .none, "demand returned from receive(_:)")
        afterCompletion.complete(.failure(TestError()))
        expectEqual(afterCompletion.probe.events, [.finished], "the stepper's events")

        let afterCancel = Scripted(design)
        afterCancel.cancel()
        expectEqual(afterCancel.send(3), .none, "demand returned from receive(_:)")
        afterCancel.complete()
        expectEqual(afterCancel.probe.events, [], "the stepper's events")
        expectEqual(afterCancel.upstream.calls, [.request(.max(1)), .cancel], "upstream's calls")
    }

    /// R1: the stepper and subscription are released after completion or cancel
    static func releasesStepperAndSubscription(design: SteppingDesign) {
        for ending in ["finished", "cancel", "promise-cancel"] {
            weak var weakToken: StepperProbe<Int>.Token?
            weak var weakSubscription: RecordingSubscription?
            let subscriber: any SteppingSubscriber<Int, TestError>
            do {
                let s = Scripted(design)
                weakToken = s.probe.token
                weakSubscription = s.upstream
                s.send(0)
                switch ending {
                case "finished": s.complete()
                case "cancel": s.cancel()
                default: s.probe.fulfil(0, .cancel); s.settle()
                }
                subscriber = s.subscriber
            }
            expect(eventually { weakToken == nil }, "\(ending): the stepper is still retained")
            expect(eventually { weakSubscription == nil }, "\(ending): the subscription is still retained")
            withExtendedLifetime(subscriber) {}
        }
    }
}
