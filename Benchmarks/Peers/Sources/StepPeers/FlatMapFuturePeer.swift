@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// The pure-Combine idiom: `flatMap(maxPublishers: .max(1))` turns each input into a `Future`
/// that is fulfilled by the promise, and asks upstream for the next input when the `Future`
/// completes; a `sink` ends the chain, and `.cancel` cancels it. Synchronous: the
/// stepper is called on upstream's thread from inside `flatMap`. Bridge: a value promise
/// (``OpenPromise``: no allocation) whose answer fulfils the `Future` (`.more`) or cancels the
/// chain (`.cancel`) — at once when the stepper answered during the call, else when it does.
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
            .init(
                .r4,
                "a promise fulfilled on another thread as upstream completes can crash the process: OpenCombine 0.14.0's FlatMap releases the upstream subscription in receive(completion:) under one lock while requestOneMorePublisher, run as the Future completes, calls it under another (async-step ×2 crashed once: 'RelaySubscription deallocated with non-zero retain count 2'; Benchmarks/Peers/Evidence/FlatMapCompletionRace crashes the same way with OpenCombine alone)",
                isIntermittent: true),
            .init(.c1, "flatMap forwards upstream's completion only once the open Future completes"),
            .init(.c2, "the completion waits for the open Future (C1), so the check's completion handler does not run"),
            .init(.c5, "inputs and completions before the subscription or after the end are not ignored"),
            .init(.c6, "a completion sent from inside the stepper reaches it inside that call, or after .cancel"),
            .init(.r1, "the chain keeps the stepper (flatMap's transform) after the completion"),
            .init(.r3, "the stepper is not released at the completion (R1)"),
        ]
    ).measured(instructionTolerance: peerInstructionTolerance)

    func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let open = OpenPromise()
        let sink = Subscribers.Sink<Void, Upstream.Failure>(
            receiveCompletion: { completion in
                if !open.cancelled { stepper(.completion(completion)) }
            },
            receiveValue: {})
        upstream
            .flatMap(maxPublishers: .max(1)) { input in
                Future<Void, Upstream.Failure> { fulfil in
                    stepper(.input(input, open.next()))
                    if let answer = open.answer {
                        FutureWaiter.resolve(answer, fulfil, sink)
                    } else if let answer = open.answer(orWait: FutureWaiter(fulfil: Handed(value: fulfil), sink: sink))
                    {
                        FutureWaiter.resolve(answer, fulfil, sink)
                    }
                }
            }
            .subscribe(sink)
        return AnyCancellable(sink)
    }

    /// The same chain with no stepper contract: each input handed to `each` inside its `Future`,
    /// which is fulfilled at once; no `prefix(while:)` (nothing can ask to stop).
    struct Direct: DirectConsumer {
        func consume<Upstream: Publisher>(
            _ upstream: Upstream, each: @escaping @Sendable (Upstream.Output) -> Void,
            end: @escaping @Sendable (Subscribers.Completion<Upstream.Failure>) -> Void
        ) -> AnyCancellable {
            upstream
                .flatMap(maxPublishers: .max(1)) { input in
                    Future<Void, Upstream.Failure> { fulfil in
                        each(input)
                        fulfil(.success(()))
                    }
                }
                .sink(receiveCompletion: end, receiveValue: {})
        }
    }
}

/// The `Future` of the input the stepper holds, and the chain's end: `.more` fulfils the
/// `Future` (`flatMap` then asks upstream for the next input), `.cancel` cancels the chain.
private struct FutureWaiter<Failure: Error>: PromiseWaiter {
    let fulfil: Handed<Future<Void, Failure>.Promise>
    let sink: Subscribers.Sink<Void, Failure>
    func answered(_ request: StepRequest) { Self.resolve(request, fulfil.value, sink) }

    static func resolve(
        _ request: StepRequest, _ fulfil: Future<Void, Failure>.Promise, _ sink: Subscribers.Sink<Void, Failure>
    ) {
        switch request {
        case .more: fulfil(.success(()))
        case .cancel: sink.cancel()
        }
    }
}
