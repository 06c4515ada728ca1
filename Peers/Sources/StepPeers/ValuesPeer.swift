@preconcurrency import OpenCombine
import Stepping

/// OpenCombine's `.values` (an `AsyncThrowingPublisher`: the stepping contract as a
/// `for try await` loop, each `next()` requesting `.max(1)`), iterated on a task started per
/// subscription. Bridge: each input waits for its promise in a checked continuation
/// (``stepAndWait(_:_:)``); `cancel()` cancels the task. The task runs on the cooperative pool,
/// so the stepper is called there, not on upstream's thread.
struct ValuesPeer: SteppingStrategy {
    static let traits = SteppingDesign.Traits(
        delivery: .onOwnExecutor, allocatesPerElement: true, allocatesPerTransition: true,
        knownIssues: LoopIssues.completionWaits + LoopIssues.cancelWaits + LoopIssues.trustsUpstream + [
            LoopIssues.poolWidth,
            .init(
                .s3, "a promise fulfilled after cancel() resumes the cancelled loop, which asks upstream once more",
                isIntermittent: true),
        ],
        instructionTolerance: peerInstructionTolerance)

    func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let inputs = PublisherInputs(upstream)
        let task = Task {
            do throws(Upstream.Failure) {
                while let input = try await inputs.next() {
                    if await stepAndWait(stepper, Handed(value: input)) == .cancel { return }
                }
                if Task.isCancelled { return }
                stepper(.completion(.finished))
            } catch {
                if Task.isCancelled { return }
                stepper(.completion(.failure(error)))
            }
        }
        return AnyCancellable { task.cancel() }
    }
}
