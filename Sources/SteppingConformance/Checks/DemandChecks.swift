import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// Rules D1–D5 of CONFORMANCE.md, for every design.
enum DemandChecks {
    /// D1: after the subscription, exactly one request(.max(1))
    static func requestsMaxOneOnceAfterSubscription(design: SteppingDesign) {
        let s = Scripted(design)
        expectSoon({ s.upstream.calls }, equals: [.request(.max(1))], "upstream's calls")
        s.settle()
        expectEqual(s.upstream.calls, [.request(.max(1))], "upstream's calls")
        expectEqual(s.probe.events, [], "the stepper's events")
    }

    /// D2: outstanding demand never exceeds 1, whatever the stepper does
    static func outstandingDemandNeverAboveOne(design: SteppingDesign) {
        let s = Scripted(design)
        for value in 0..<20 {
            expect(s.totalDemand - value == 1, "before input \(value)")
            s.send(value)
            expect(s.totalDemand - value == 1, "a request ahead while input \(value)'s promise is unfulfilled")
            switch value % 4 {
            case 0: s.probe.fulfil(value, .more)
            case 1: s.probe.fulfil(value, .more); s.probe.fulfil(value, .more)  // duplicate
            case 2: s.probe.fulfil(value, .more); if value > 0 { s.probe.fulfil(value - 1, .more) }  // stale
            default: _ = onAnotherThread { s.probe.fulfil(value, .more) }
            }
            s.settle()
            expect(eventually { s.totalDemand - (value + 1) == 1 }, "after input \(value)")
        }
        expectEqual(s.probe.violations, [], "what the stepper saw wrong")
        expectEqual(s.probe.inputs, Array(0..<20), "the stepper's inputs")
    }

    /// D2: against a demand-checking upstream with mixed promise threads
    static func demandCheckingUpstream(design: SteppingDesign) {
        let upstream = CountingUpstream(count: 2_000)
        let probe = StepperProbe<Int> { probe, index, _ in
            if index % 3 == 0 {
                probe.fulfil(index, .more)
            } else {
                DispatchQueue.global().async { probe.fulfil(index, .more) }
            }
        }
        let subscriber = design.subscriber(probe)
        upstream.setFailureType(to: TestError.self).subscribe(subscriber)
        expectSoon(timeout: Conformance.patience(30), { probe.completions }, equals: 1, "completions the stepper got")
        // the upstream records every time more than one element is outstanding (D2) and request(.none) (D5)
        expectEqual(upstream.conduit?.violations, [], "the demand violations upstream recorded")
        expectEqual(probe.inputs, Array(0..<2_000), "the stepper's inputs")
        expectEqual(probe.violations, [], "what the stepper saw wrong")
    }

    /// D3: .more during the stepper call is returned from receive, not requested
    static func synchronousMoreIsReturnedAsDemand(design: SteppingDesign) {
        let s = Scripted(design) { probe, index, _ in probe.fulfil(index, .more) }
        for value in 0..<5 {
            let demand = s.send(value)
            if design.deliversSynchronously {
                expectEqual(demand, .max(1), "demand returned from receive(_:)")
            } else {
                expectEqual(demand, .none, "demand returned from receive(_:)")
            }
        }
        expectSoon({ s.totalDemand }, equals: 6, "demand signalled upstream")
        if design.deliversSynchronously {
            expect(s.upstream.calls == [.request(.max(1))], "no separate request may be made")
        }
        expectEqual(s.probe.inputs, Array(0..<5), "the stepper's inputs")
    }

    /// D4: .more after the stepper returned makes exactly one request, on the fulfilling thread
    static func laterMoreRequestsOnceOnFulfillingThread(design: SteppingDesign) {
        let s = Scripted(design)
        expectEqual(s.send(0), .none, "demand returned from receive(_:)")
        // The fulfilling thread waits for the request before it ends: a thread that has ended
        // can hand its id to the next one (a worker that made the request would then pass).
        let thread = onAnotherThread {
            s.probe.fulfil(0, .more)
            _ = eventually { s.upstream.requests >= 2 }
        }
        expectSoon({ s.upstream.requests }, equals: 2, "upstream requests")
        s.settle()
        expectEqual(s.upstream.calls, [.request(.max(1)), .request(.max(1))], "upstream's calls")
        if design.deliversSynchronously, let thread {
            expect(
                pthread_equal(s.upstream.requestThreads[1], thread) != 0,
                "the request must be made on the thread that fulfilled the promise")
        }
    }

    /// D5: request(.none) is never called
    static func neverRequestsNone(design: SteppingDesign) {
        let s = Scripted(design) { probe, index, _ in
            switch index % 3 {
            case 0: probe.fulfil(index, .more)
            case 1: break
            default: probe.fulfil(index, .more); probe.fulfil(index, .more)
            }
        }
        for value in 0..<12 {
            s.send(value)
            if value % 3 == 1 { s.probe.fulfil(value, .more) }
            s.settle()
        }
        s.complete()
        expect(
            !s.upstream.calls.contains(.request(.none)),
            "expected no request(.none), saw upstream get \(s.upstream.calls)")
        expectEqual(s.probe.events.last, .finished, "the stepper's events")
    }
}
