@_spi(Measurement) import Stepping

extension Conformance {
    /// The scripted checks (one design driven by hand, and real OpenCombine publishers); the
    /// conformance tests of the six designs before the kit, moved here whole.
    static let scriptedChecks: [Check] = [
        Check(
            .r4, "requestWaitingForCancelOnAnotherThread",
            "R4, C4: a first request that waits for cancel() on another thread stalls neither",
            CallOutChecks.requestWaitingForCancelOnAnotherThread),
        Check(
            .r4, "blockedSteppersDoNotStall",
            "R4: 600 steppers that block until all have begun, each fed from its own thread: all begin",
            CallOutChecks.blockedSteppersDoNotStall),
        Check(
            .c6, "cancelAfterReentrantCompletion",
            "C6: promise(.cancel) or cancel() after a re-entrant completion: nothing upstream, no completion",
            CallOutChecks.cancelAfterReentrantCompletion),
        Check(
            .r1, "keptPromiseOutlivesSubscriber",
            "R1: a promise kept after the last reference to its subscriber still acts, then lets go",
            CallOutChecks.keptPromiseOutlivesSubscriber),
        Check(
            .c1, "completionDeliveredExactlyOnce",
            "C1: completion is delivered exactly once, with no demand or an unfulfilled promise",
            CompletionChecks.completionDeliveredExactlyOnce),
        Check(
            .c2, "noUpstreamCallsDuringCompletion", "C2: no request or cancel upstream while handling a completion",
            CompletionChecks.noUpstreamCallsDuringCompletion),
        Check(
            .c3, "secondSubscriptionIsCancelled", "C3: a second subscription is cancelled; the first keeps working",
            CompletionChecks.secondSubscriptionIsCancelled),
        Check(
            .c4, "cancelIsIdempotentAndFinal",
            "C4: cancel from many threads cancels upstream once; nothing reaches the stepper after",
            CompletionChecks.cancelIsIdempotentAndFinal),
        Check(
            .c5, "misbehavingUpstreamIsIgnored",
            "C5: inputs and completions before subscription, after completion or after cancel are ignored",
            CompletionChecks.misbehavingUpstreamIsIgnored),
        Check(
            .r1, "releasesStepperAndSubscription",
            "R1: the stepper and subscription are released after completion or cancel",
            CompletionChecks.releasesStepperAndSubscription),
        Check(
            .d1, "requestsMaxOneOnceAfterSubscription", "D1: after the subscription, exactly one request(.max(1))",
            DemandChecks.requestsMaxOneOnceAfterSubscription),
        Check(
            .d2, "outstandingDemandNeverAboveOne", "D2: outstanding demand never exceeds 1, whatever the stepper does",
            DemandChecks.outstandingDemandNeverAboveOne),
        Check(
            .d2, "demandCheckingUpstream", "D2: against a demand-checking upstream with mixed promise threads",
            DemandChecks.demandCheckingUpstream),
        Check(
            .d3, "synchronousMoreIsReturnedAsDemand",
            "D3: .more during the stepper call is returned from receive, not requested",
            DemandChecks.synchronousMoreIsReturnedAsDemand),
        Check(
            .d4, "laterMoreRequestsOnceOnFulfillingThread",
            "D4: .more after the stepper returned makes exactly one request, on the fulfilling thread",
            DemandChecks.laterMoreRequestsOnceOnFulfillingThread),
        Check(.d5, "neverRequestsNone", "D5: request(.none) is never called", DemandChecks.neverRequestsNone),
        Check(
            .s1, "sequencePublisher", "Publishers.Sequence: every element in order, then finished (D1, D3, S1, C1)",
            RealUpstreamChecks.sequencePublisher),
        Check(
            .c1, "justEmptyFail", "Just, Empty, Fail: completion delivered exactly once (C1)",
            RealUpstreamChecks.justEmptyFail),
        Check(
            .d4, "bufferedSubjectWithAsyncMore",
            "PassthroughSubject behind buffer: one at a time, in order, none lost (D2, S1, D4)",
            RealUpstreamChecks.bufferedSubjectWithAsyncMore),
        Check(
            .c4, "anyCancellableCancels",
            "cancelling through AnyCancellable cancels upstream and stops the stepper (C4, S4)",
            RealUpstreamChecks.anyCancellableCancels),
        Check(
            .s1, "orderedSerialStepperCalls",
            "S1: inputs in order, one call at a time, never while a promise is unfulfilled",
            StepChecks.orderedSerialStepperCalls),
        Check(
            .s1, "neverASecondInputWhilePromiseUnfulfilled", "S1: a misbehaving upstream cannot overlap stepper calls",
            StepChecks.neverASecondInputWhilePromiseUnfulfilled),
        Check(
            .s2, "secondCallOfSamePromiseDoesNothing", "S2: a promise acts at most once",
            StepChecks.secondCallOfSamePromiseDoesNothing),
        Check(
            .s3, "stalePromisesDoNothing",
            "S3: stale promises do nothing: earlier input, after completion, after cancel",
            StepChecks.stalePromisesDoNothing),
        Check(
            .s4, "promiseCancelCancelsOnce",
            "S4: promise(.cancel) cancels upstream once; the stepper gets nothing more",
            StepChecks.promiseCancelCancelsOnce),
        Check(
            .s5, "reentrantPromiseAndUpstream",
            "S5: the stepper may call the promise synchronously; an upstream may re-enter on request",
            StepChecks.reentrantPromiseAndUpstream),
        Check(
            .s5, "millionElementsNoRecursion",
            "S5: 1,000,000 synchronous elements with synchronous .more do not grow the stack",
            StepChecks.millionElementsNoRecursion),
    ]
}
