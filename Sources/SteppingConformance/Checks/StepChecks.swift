import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// Rules S1–S5 of CONFORMANCE.md, for every design.
enum StepChecks {
    /// S1: inputs in order, one call at a time, never while a promise is unfulfilled
    static func orderedSerialStepperCalls(design: SteppingDesign) {
        let count = 5_000
        let upstream = CountingUpstream(count: count)
        let probe = StepperProbe<Int> { probe, index, _ in
            switch index % 4 {
            case 0: probe.fulfil(index, .more)
            case 1: DispatchQueue.global().async { probe.fulfil(index, .more) }
            case 2: Thread.detachNewThread { probe.fulfil(index, .more) }
            default:
                DispatchQueue.global().async {
                    probe.fulfil(index, .more); probe.fulfil(index, .more)
                }
            }
        }
        let subscriber = design.subscriber(probe)
        upstream.setFailureType(to: TestError.self).subscribe(subscriber)
        expect(eventually(timeout: Conformance.patience(60)) { probe.completions == 1 }, "\(design) did not finish")
        expect(probe.violations.isEmpty, "\(probe.violations.prefix(3))")
        expectEqual(probe.inputs, Array(0..<count), "the stepper's inputs")
        expectEqual(probe.events.last, .finished, "the stepper's events")
    }

    /// S1: a misbehaving upstream cannot overlap stepper calls
    static func neverASecondInputWhilePromiseUnfulfilled(design: SteppingDesign) {
        let s = Scripted(design)
        s.send(0)
        expectEqual(s.probe.inputs, [0], "the stepper's inputs")
        s.probe.fulfil(0, .more)
        s.settle()  // upstream sends once the request has reached it (an actor requests on its own)
        s.send(1)
        expectSoon({ s.probe.inputs }, equals: [0, 1], "the stepper's inputs")
        expectEqual(s.probe.violations, [], "what the stepper saw wrong")
    }

    /// S2: a promise acts at most once
    static func secondCallOfSamePromiseDoesNothing(design: SteppingDesign) {
        let s = Scripted(design)
        s.send(0)
        s.probe.fulfil(0, .more)
        s.settle()
        s.probe.fulfil(0, .more)
        s.probe.fulfil(0, .cancel)
        s.settle()
        expectEqual(s.upstream.calls, [.request(.max(1)), .request(.max(1))], "upstream's calls")
        // and from inside the stepper call:
        let t = Scripted(design) { probe, index, _ in
            probe.fulfil(index, .more)
            probe.fulfil(index, .more)
            probe.fulfil(index, .cancel)
        }
        t.send(0)
        expectSoon({ t.totalDemand }, equals: 2, "demand signalled upstream")
        t.settle()
        expectEqual(t.totalDemand, 2, "demand signalled upstream")
        expectEqual(t.upstream.cancels, 0, "upstream cancels")
    }

    /// S3: stale promises do nothing: earlier input, after completion, after cancel
    static func stalePromisesDoNothing(design: SteppingDesign) {
        let s = Scripted(design)
        s.send(0)
        s.probe.fulfil(0, .more)
        s.settle()  // upstream sends once the request has reached it (an actor requests on its own)
        s.send(1)
        // What the stale promises do is compared with what was asked before them, so that a
        // design that asks ahead (D2) is not taken for one whose stale promises act.
        let beforeStale = s.upstream.calls
        s.probe.fulfil(0, .more)  // stale: earlier input
        s.probe.fulfil(0, .cancel)  // stale
        s.settle()
        expect(s.upstream.calls == beforeStale, "a stale promise of an earlier input acted")
        s.complete()
        let beforeCompleted = s.upstream.calls
        s.probe.fulfil(1, .more)  // after completion
        s.probe.fulfil(1, .cancel)
        s.settle()
        expect(s.upstream.calls == beforeCompleted, "a promise acted after the completion")

        let c = Scripted(design)
        c.send(0)
        c.cancel()
        let beforeCancelled = c.upstream.calls
        c.probe.fulfil(0, .more)  // after cancel
        c.probe.fulfil(0, .cancel)
        c.settle()
        expect(c.upstream.calls == beforeCancelled, "a promise acted after cancel()")
    }

    /// S4: promise(.cancel) cancels upstream once; the stepper gets nothing more
    static func promiseCancelCancelsOnce(design: SteppingDesign) {
        // after the stepper returned
        let s = Scripted(design)
        s.send(0)
        s.probe.fulfil(0, .cancel)
        s.settle()
        s.probe.fulfil(0, .cancel)
        s.send(1)
        s.complete()
        expectEqual(s.upstream.calls, [.request(.max(1)), .cancel], "upstream's calls")
        expectEqual(s.probe.events, [.input(0)], "the stepper's events")
        // during the stepper call
        let t = Scripted(design) { probe, index, _ in probe.fulfil(index, .cancel) }
        expectEqual(t.send(0), .none, "demand returned from receive(_:)")
        t.send(1)
        t.complete(.failure(TestError()))
        expectSoon({ t.upstream.cancels }, equals: 1, "upstream cancels")
        t.settle()
        expectEqual(t.upstream.calls, [.request(.max(1)), .cancel], "upstream's calls")
        expectEqual(t.probe.events, [.input(0)], "the stepper's events")
    }

    /// S5: the stepper may call the promise synchronously; an upstream may re-enter on request
    static func reentrantPromiseAndUpstream(design: SteppingDesign) {
        // The upstream sends the next input from inside `request`, as a synchronous publisher
        // does: a design holding its lock while calling `request` would deadlock here.
        let next = Box(1)
        let s = Scripted(design, subscribe: false)
        nonisolated(unsafe) let subscriber = s.subscriber  // subscribers are thread-safe by contract
        s.upstream.onRequest = { _ in
            let value = next.mutate { v -> Int in
                defer { v += 1 }; return v
            }
            if value <= 3 { _ = subscriber.receive(value) }
        }
        subscriber.receive(subscription: s.upstream)
        s.settle()
        expectSoon({ s.probe.inputs }, equals: [1], "the stepper's inputs")
        _ = onAnotherThread { s.probe.fulfil(0, .more) }  // request → re-entrant input 2
        expectSoon({ s.probe.inputs }, equals: [1, 2], "the stepper's inputs")
        // The stepper fulfils synchronously and also cancels the subscriber from inside.
        s.probe.reaction = { probe, index, _ in
            probe.fulfil(index, .more)
            subscriber.cancel()
        }
        _ = onAnotherThread { s.probe.fulfil(1, .more) }
        expectSoon({ s.upstream.cancels }, equals: 1, "upstream cancels")
        s.settle()
        expectEqual(s.probe.inputs, [1, 2, 3], "the stepper's inputs")
        expectEqual(s.probe.violations, [], "what the stepper saw wrong")
    }

    /// S5: 1,000,000 synchronous elements with synchronous .more do not grow the stack
    static func millionElementsNoRecursion(design: SteppingDesign) {
        let count = Conformance.configuration.s5Elements
        let received = Box(0)
        let firstOutOfOrder = Box<(value: Int, at: Int)?>(nil)
        let finished = Box(false)
        let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
            switch event {
            case .input(let value, let promise):
                received.mutate { n in
                    if value != n && firstOutOfOrder.value == nil { firstOutOfOrder.mutate { $0 = (value, n) } }
                    n += 1
                }
                promise(.more)
            case .completion: finished.mutate { $0 = true }
            }
        }
        (0..<count).publisher.subscribe(subscriber)
        expect(
            eventually(timeout: Conformance.patience(120)) { finished.value },
            "expected the stream to finish within \(Int(Conformance.patience(120))) s; \(received.value) of \(count) received"
        )
        expectEqual(received.value, count, "inputs received")
        expect(firstOutOfOrder.value == nil, "out of order: \(String(describing: firstOutOfOrder.value))")

        // and with the suite's trampolined upstream: a nested emission would be a second stepper
        // call inside the first, which the probe records (S1)
        let upstream = CountingUpstream(count: 10_000)
        let probe = StepperProbe<Int> { probe, index, _ in probe.fulfil(index, .more) }
        upstream.setFailureType(to: TestError.self).subscribe(design.subscriber(probe))
        expectSoon(timeout: Conformance.patience(30), { probe.completions }, equals: 1, "completions the stepper got")
        expect(probe.violations.isEmpty, "\(probe.violations.prefix(3))")
        expectEqual(probe.inputs, Array(0..<10_000), "the stepper's inputs")
        expectEqual(upstream.conduit?.violations, [], "the demand violations upstream recorded")
    }
}
