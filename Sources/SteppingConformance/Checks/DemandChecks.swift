import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// Rules D1–D5 of CONFORMANCE.md, for every design.
enum DemandChecks {
    /// D1: after the subscription, exactly one request(.max(1))
    static func requestsMaxOneOnceAfterSubscription(design: SteppingDesign) {
        let s = Scripted(design)
        expect(eventually { s.upstream.calls == [.request(.max(1))] })
        s.settle()
        expect(s.upstream.calls == [.request(.max(1))])
        expect(s.probe.events.isEmpty)
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
        expect(s.probe.violations.isEmpty)
        expect(s.probe.inputs == Array(0..<20))
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
        expect(eventually(timeout: 30) { probe.completions == 1 })
        // the upstream records every time more than one element is outstanding (D2) and request(.none) (D5)
        expect(upstream.conduit?.violations == [])
        expect(probe.inputs == Array(0..<2_000))
        expect(probe.violations.isEmpty)
    }

    /// D3: .more during the stepper call is returned from receive, not requested
    static func synchronousMoreIsReturnedAsDemand(design: SteppingDesign) {
        let s = Scripted(design) { probe, index, _ in probe.fulfil(index, .more) }
        for value in 0..<5 {
            let demand = s.send(value)
            if design.deliversSynchronously {
                expect(demand == .max(1))
            } else {
                expect(demand == .none)
            }
        }
        expect(eventually { s.totalDemand == 6 })
        if design.deliversSynchronously {
            expect(s.upstream.calls == [.request(.max(1))], "no separate request may be made")
        }
        expect(s.probe.inputs == Array(0..<5))
    }

    /// D4: .more after the stepper returned makes exactly one request, on the fulfilling thread
    static func laterMoreRequestsOnceOnFulfillingThread(design: SteppingDesign) {
        let s = Scripted(design)
        expect(s.send(0) == .none)
        let thread = onAnotherThread { s.probe.fulfil(0, .more) }
        expect(eventually { s.upstream.requests == 2 })
        s.settle()
        expect(s.upstream.calls == [.request(.max(1)), .request(.max(1))])
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
        expect(!s.upstream.calls.contains(.request(.none)))
        expect(s.probe.events.last == .finished)
    }
}
