import AsyncAlgorithms
import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// swift-async-algorithms' `MultiProducerSingleConsumerAsyncChannel` with
/// `.watermark(low: 1, high: 1)`: a subscriber `send`s each input to the channel's source and
/// asks upstream for the next one in `onProduceMore`; a consumer task iterates the channel and
/// steps. The channel asks for more as soon as its buffer falls below the low watermark, which
/// is when the consumer takes an input, so upstream is asked for the next input while the
/// stepper still holds the promise: one ahead (rule D2). Upstream's failure finishes the
/// channel with it. Bridge: the subscriber, one task per subscription, ``OpenPromise`` (a
/// continuation only for an open promise).
struct WatermarkChannelPeer: SteppingStrategy {
    static let traits = SteppingDesign.Traits(
        delivery: .onOwnExecutor, allocatesPerElement: true, allocatesPerTransition: true,
        knownIssues: LoopIssues.completionWaits + LoopIssues.cancelWaits + LoopIssues.trustsUpstream + [
            .init(LoopIssues.poolWidth.rule, LoopIssues.poolWidth.reason, isIntermittent: true),
            LoopIssues.twoTasksSlow,
            .init(.d2, "the channel asks for the next input as soon as the consumer takes one (low watermark 1)"),
        ]
    ).measured(instructionTolerance: peerInstructionTolerance)

    func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        let (channel, producer) = Self.channel(of: upstream)
        let bridge = OpenPromise()
        let consumer = Task {
            do throws(Upstream.Failure) {
                while let input = try await channel.next() {
                    if await bridge.step(stepper, input.value) == .cancel {
                        producer.cancel()
                        return
                    }
                }
                if Task.isCancelled { return }
                stepper(.completion(.finished))
            } catch {
                if Task.isCancelled { return }
                stepper(.completion(.failure(error)))
            }
        }
        upstream.subscribe(producer)
        return AnyCancellable {
            consumer.cancel()
            producer.cancel()
        }
    }

    /// The channel (low and high watermark 1) and the subscriber that feeds it from `upstream`
    /// (subscribed by the caller, once its consumer runs).
    static func channel<Upstream: Publisher>(of upstream: Upstream) -> (
        ChannelBox<Handed<Upstream.Output>, Upstream.Failure>, ChannelProducer<Upstream.Output, Upstream.Failure>
    ) {
        var channelAndSource = MultiProducerSingleConsumerAsyncChannel.makeChannel(
            of: Handed<Upstream.Output>.self, throwing: Upstream.Failure.self,
            backpressureStrategy: .watermark(low: 1, high: 1))
        let channel = ChannelBox(channelAndSource.takeChannel())
        return (channel, ChannelProducer(source: channelAndSource.source))
    }

    /// The same channel with no stepper contract: the consumer is
    /// `while let input = try await channel.next() { each(input) }`.
    struct Direct: DirectConsumer {
        func consume<Upstream: Publisher>(
            _ upstream: Upstream, each: @escaping @Sendable (Upstream.Output) -> Void,
            end: @escaping @Sendable (Subscribers.Completion<Upstream.Failure>) -> Void
        ) -> AnyCancellable {
            let (channel, producer) = WatermarkChannelPeer.channel(of: upstream)
            let consumer = Task {
                do throws(Upstream.Failure) {
                    while let input = try await channel.next() { each(input.value) }
                    if Task.isCancelled { return }
                    end(.finished)
                } catch {
                    if Task.isCancelled { return }
                    end(.failure(error))
                }
            }
            upstream.subscribe(producer)
            return AnyCancellable {
                consumer.cancel()
                producer.cancel()
            }
        }
    }
}

/// The consumer's end of the channel (not copyable, so kept in a box the task holds).
final class ChannelBox<Element, Failure: Error>: @unchecked Sendable {  // used by one task
    private var channel: MultiProducerSingleConsumerAsyncChannel<Element, Failure>
    init(_ channel: consuming sending MultiProducerSingleConsumerAsyncChannel<Element, Failure>) {
        self.channel = channel
    }
    func next() async throws(Failure) -> Element? { try await channel.next() }
}

/// Feeds the channel: requests one input, sends it, and asks for the next when the channel
/// asks for more. The channel may ask during `send` (when the consumer is already waiting): that
/// request is made once `send` has returned, since `send` runs under the lock that guards the
/// source (recursive, so the callback can tell); a later ask requests on the asking thread.
final class ChannelProducer<Input, Failure: Error>: Subscriber, @unchecked Sendable {  // state behind `lock`
    private let lock = NSRecursiveLock()
    private var source: MultiProducerSingleConsumerAsyncChannel<Handed<Input>, Failure>.Source?
    private var subscription: (any Subscription)?
    private var cancelled = false
    private var sending = false
    private var moreDuringSend = false
    private var cancelDuringSend = false

    init(source: consuming MultiProducerSingleConsumerAsyncChannel<Handed<Input>, Failure>.Source) {
        self.source = consume source
    }

    func receive(subscription: any Subscription) {
        lock.lock()
        let accepted = !cancelled && self.subscription == nil
        if accepted { self.subscription = subscription }
        lock.unlock()
        if accepted { subscription.request(.max(1)) } else { subscription.cancel() }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        lock.lock()
        sending = true
        source?.send(Handed(value: input)) { [weak self] result in self?.produceMore(result) }
        sending = false
        let more = moreDuringSend ? subscription : nil
        let cancelled = cancelDuringSend
        moreDuringSend = false
        cancelDuringSend = false
        lock.unlock()
        if cancelled { cancel() } else { more?.request(.max(1)) }
        return .none
    }

    /// The channel's answer to a send: more, or failure (the consumer is gone: cancel). Inside
    /// `send` both wait until it returns, since `cancel()` takes the source `send` is using.
    private func produceMore(_ result: Result<Void, any Error>) {
        lock.lock()
        if sending {  // inside `send`, on its thread (the lock is held by no one else)
            if case .success = result { moreDuringSend = true } else { cancelDuringSend = true }
            lock.unlock()
            return
        }
        let subscription = self.subscription
        lock.unlock()
        if case .success = result { subscription?.request(.max(1)) } else { cancel() }
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        lock.lock()
        subscription = nil
        let source = self.source.take()
        lock.unlock()
        switch completion {
        case .finished: source?.finish()
        case .failure(let failure): source?.finish(throwing: failure)
        }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let subscription = self.subscription.take()
        let source = self.source.take()
        lock.unlock()
        subscription?.cancel()
        source?.finish()
    }
}
