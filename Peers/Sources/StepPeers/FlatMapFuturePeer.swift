@preconcurrency import OpenCombine
import Stepping

/// The pure-Combine idiom: `flatMap(maxPublishers: .max(1))` turns each input into a `Future`
/// that is fulfilled by the promise, and asks upstream for the next input when the `Future`
/// completes; `prefix(while:)` stops at `.cancel`; a `sink` ends the chain. Synchronous: the
/// stepper is called on upstream's thread from inside `flatMap`. Bridge: the promise fulfils
/// the `Future` (a `Future`, its subscription and the promise's closure per input).
struct FlatMapFuturePeer: SteppingStrategy {
    static let traits = SteppingDesign.Traits(
        allocatesPerElement: true, allocatesPerTransition: true,
        knownIssues: [
            .init(.d3, "a .more inside the stepper completes the Future, and flatMap requests the next input itself"),
            .init(.s1, "flatMap passes an input sent without demand to a new Future: the stepper gets it"),
            .init(
                .s2,
                "duplicate and stale promises fulfilled on other threads while the stepper runs stall the stream (stale-storm ×2 and ×4 stopped with elements left on every run here; the kit's S2 check does not show it)",
                isIntermittent: true, isFatal: true),
            .init(
                .c4,
                "cancel() racing an input is a data race in OpenCombine 0.14.0's FlatMap (cancel() takes the upstream subscription under one lock, requestOneMorePublisher reads it under another): the stepper goes on being called after cancel() returned, and the process can crash (cancel-race: SIGSEGV in requestOneMorePublisher)",
                isIntermittent: true, isFatal: true),
            .init(.c1, "flatMap forwards upstream's completion only once the open Future completes"),
            .init(.c2, "the completion waits for the open Future (C1), so the check's completion handler does not run"),
            .init(.c5, "inputs and completions before the subscription or after the end are not ignored"),
            .init(.c6, "a completion sent from inside the stepper reaches it inside that call, or after .cancel"),
            .init(.r1, "the chain keeps the stepper (flatMap's transform) after the completion"),
            .init(.r3, "the stepper is not released at the completion (R1)"),
        ],
        instructionTolerance: peerInstructionTolerance)

    func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let stopped = Flag()
        return
            upstream
            .flatMap(maxPublishers: .max(1)) { input in
                Future<StepRequest, Upstream.Failure> { fulfil in
                    let fulfil = Handed(value: fulfil)
                    stepper(
                        .input(
                            input,
                            StepPromise { request in
                                if request == .cancel { stopped.set() }
                                fulfil.value(.success(request))
                            }))
                }
            }
            .prefix { $0 == .more }
            .sink(
                receiveCompletion: { completion in
                    if !stopped.isSet { stepper(.completion(completion)) }
                },
                receiveValue: { _ in })
    }
}
