import AsyncAlgorithms
import Foundation
@preconcurrency import OpenCombine
import Stepping

/// swift-async-algorithms' `AsyncChannel`: a producer task iterates OpenCombine's `.values` and
/// `send`s each input, suspending until the consumer takes it; a consumer task iterates the
/// channel and steps. `send` returns as the consumer takes the input, so the producer asks
/// upstream for the next input while the stepper still holds the promise: one ahead (rule D2).
/// The channel carries no failure: upstream's failure waits in a box until the channel ends.
/// Bridge: two tasks per subscription, the continuation per input (``stepAndWait(_:_:)``).
struct AsyncChannelPeer: SteppingStrategy {
    static let traits = SteppingDesign.Traits(
        delivery: .onOwnExecutor, allocatesPerElement: true, allocatesPerTransition: true,
        knownIssues: LoopIssues.completionWaits + LoopIssues.cancelWaits + LoopIssues.trustsUpstream + [
            LoopIssues.poolWidth,
            LoopIssues.twoTasksSlow,
            .init(.d2, "the producer task asks upstream for the next input as soon as the consumer takes one"),
        ],
        instructionTolerance: peerInstructionTolerance)

    func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let channel = AsyncChannel<Handed<Upstream.Output>>()
        let failure = Failure<Upstream.Failure>()
        let inputs = PublisherInputs(upstream)
        let producer = Task {
            do throws(Upstream.Failure) {
                while let input = try await inputs.next() { await channel.send(Handed(value: input)) }
            } catch {
                failure.set(error)
            }
            channel.finish()
        }
        let consumer = Task {
            for await input in channel {
                if await stepAndWait(stepper, input) == .cancel {
                    producer.cancel()
                    return
                }
            }
            if Task.isCancelled { return }
            stepper(.completion(failure.value.map { .failure($0) } ?? .finished))
        }
        return AnyCancellable {
            consumer.cancel()
            producer.cancel()
        }
    }
}

/// Upstream's failure, kept for the consumer to deliver after the channel ends.
private final class Failure<Value: Error>: @unchecked Sendable {  // `stored` behind `lock`
    private let lock = NSLock()
    private var stored: Value?
    func set(_ value: Value) { lock.withLock { stored = value } }
    var value: Value? { lock.withLock { stored } }
}
