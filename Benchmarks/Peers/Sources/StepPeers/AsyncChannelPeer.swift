import AsyncAlgorithms
import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// swift-async-algorithms' `AsyncChannel`: a producer task iterates OpenCombine's `.values` and
/// `send`s each input, suspending until the consumer takes it; a consumer task iterates the
/// channel and steps. `send` returns as the consumer takes the input, so the producer asks
/// upstream for the next input while the stepper still holds the promise: one ahead (rule D2).
/// The channel carries no failure: upstream's failure waits in a box until the channel ends.
/// Bridge: two tasks per subscription and ``OpenPromise`` (a continuation only for an open promise).
struct AsyncChannelPeer: SteppingStrategy {
    static let traits = SteppingDesign.Traits(
        delivery: .onOwnExecutor, allocatesPerElement: true, allocatesPerTransition: true,
        knownIssues: LoopIssues.completionWaits + LoopIssues.cancelWaits + LoopIssues.trustsUpstream + [
            LoopIssues.poolWidth,
            LoopIssues.twoTasksSlow,
            .init(.d2, "the producer task asks upstream for the next input as soon as the consumer takes one"),
        ]
    ).measured(instructionTolerance: peerInstructionTolerance)

    func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let channel = AsyncChannel<Handed<Upstream.Output>>()
        let failure = Failure<Upstream.Failure>()
        let producer = Self.feed(channel, from: upstream, failure: failure)
        let bridge = OpenPromise()
        let consumer = Task {
            for await input in channel {
                if await bridge.step(stepper, input.value) == .cancel {
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

    /// The producer task: `.values` into the channel, upstream's failure into `failure`.
    private static func feed<Upstream: Publisher>(
        _ channel: AsyncChannel<Handed<Upstream.Output>>, from upstream: Upstream, failure: Failure<Upstream.Failure>
    ) -> Task<Void, Never> {
        let values = subscribedValues(upstream)
        return Task {
            var inputs = values.value
            do {
                while let input = try await inputs.next() { await channel.send(Handed(value: input)) }
            } catch {
                failure.set(error as! Upstream.Failure)  // `.values` rethrows upstream's failure erased
            }
            channel.finish()
        }
    }

    /// The same two tasks with no stepper contract: the consumer is `for await input in channel { each(input) }`.
    struct Direct: DirectConsumer {
        func consume<Upstream: Publisher>(
            _ upstream: Upstream, each: @escaping @Sendable (Upstream.Output) -> Void,
            end: @escaping @Sendable (Subscribers.Completion<Upstream.Failure>) -> Void
        ) -> AnyCancellable {
            let channel = AsyncChannel<Handed<Upstream.Output>>()
            let failure = Failure<Upstream.Failure>()
            let producer = AsyncChannelPeer.feed(channel, from: upstream, failure: failure)
            let consumer = Task {
                for await input in channel { each(input.value) }
                if Task.isCancelled { return }
                end(failure.value.map { .failure($0) } ?? .finished)
            }
            return AnyCancellable {
                consumer.cancel()
                producer.cancel()
            }
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
