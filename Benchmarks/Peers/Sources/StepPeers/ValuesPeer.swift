@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// OpenCombine's `.values` (an `AsyncThrowingPublisher`: the stepping contract as a
/// `for try await` loop, each `next()` requesting `.max(1)`), iterated on a task started per
/// subscription. Bridge: ``OpenPromise`` (a value promise per input; a checked continuation only
/// for a promise still open when the stepper returns); `cancel()` cancels the task. The task runs on the cooperative pool,
/// so the stepper is called there, not on upstream's thread.
struct ValuesPeer: SteppingStrategy {
    static let traits = SteppingDesign.Traits(
        delivery: .onOwnExecutor, allocatesPerElement: true, allocatesPerTransition: true,
        knownIssues: LoopIssues.completionWaits + LoopIssues.cancelWaits + LoopIssues.trustsUpstream + [
            LoopIssues.poolWidth,
            .init(
                .s3, "a promise fulfilled after cancel() resumes the cancelled loop, which asks upstream once more",
                isIntermittent: true),
        ]
    ).measured(instructionTolerance: peerInstructionTolerance)

    func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let values = subscribedValues(upstream)
        let bridge = OpenPromise()
        let task = Task {
            var inputs = values.value
            do {
                while let input = try await inputs.next() {
                    if await bridge.step(stepper, input) == .cancel { return }
                }
                if Task.isCancelled { return }
                stepper(.completion(.finished))
            } catch {
                if Task.isCancelled { return }
                // `.values` rethrows upstream's failure erased.
                stepper(.completion(.failure(error as! Upstream.Failure)))
            }
        }
        return AnyCancellable { task.cancel() }
    }

    /// The same loop with no stepper contract: `while let input = try await inputs.next() { each(input) }`.
    struct Direct: DirectConsumer {
        func consume<Upstream: Publisher>(
            _ upstream: Upstream, each: @escaping @Sendable (Upstream.Output) -> Void,
            end: @escaping @Sendable (Subscribers.Completion<Upstream.Failure>) -> Void
        ) -> AnyCancellable {
            let values = subscribedValues(upstream)
            let task = Task {
                var inputs = values.value
                do {
                    while let input = try await inputs.next() { each(input) }
                    end(.finished)
                } catch {
                    end(.failure(error as! Upstream.Failure))
                }
            }
            return AnyCancellable { task.cancel() }
        }
    }
}
