@preconcurrency import OpenCombine
import Stepping

/// What a person choosing how to process a publisher one element at a time would weigh instead
/// of a stepping subscriber, each written as its tool's users write it and described as an
/// outside design (it subscribes itself: ``SteppingStrategy``). Each peer's type says what it
/// is, what its bridge to the stepper contract costs, and why it breaks the rules it declares.
public enum Peers {
    /// OpenCombine's `.values`: a `for try await` loop on a task; every `next()` asks for one.
    public static let values = SteppingDesign(
        name: "combine-values", traits: ValuesPeer.traits, strategy: ValuesPeer())
    /// OpenCombine's `flatMap(maxPublishers: .max(1))` with a `Future` per input: pure Combine.
    public static let flatMapFuture = SteppingDesign(
        name: "flatmap-future", traits: FlatMapFuturePeer.traits, strategy: FlatMapFuturePeer())
    /// swift-async-algorithms' `AsyncChannel`, fed from `.values` by a producer task.
    public static let asyncChannel = SteppingDesign(
        name: "async-channel", traits: AsyncChannelPeer.traits, strategy: AsyncChannelPeer())
    /// swift-async-algorithms' `MultiProducerSingleConsumerAsyncChannel` with
    /// `.watermark(low: 1, high: 1)`, fed by a subscriber that requests in `onProduceMore`.
    public static let watermarkChannel = SteppingDesign(
        name: "mpsc-channel", traits: WatermarkChannelPeer.traits, strategy: WatermarkChannelPeer())

    /// Every peer, in the order tables show them.
    public static var all: [SteppingDesign] { [values, flatMapFuture, asyncChannel, watermarkChannel] }

    /// Each peer's direct row: its library consuming a publisher as its users write it when the
    /// work per input is synchronous, with no stepper contract (``DirectConsumer``).
    public static var direct: [(peer: SteppingDesign, consumer: any DirectConsumer)] {
        [
            (values, ValuesPeer.Direct()), (flatMapFuture, FlatMapFuturePeer.Direct()),
            (asyncChannel, AsyncChannelPeer.Direct()), (watermarkChannel, WatermarkChannelPeer.Direct()),
        ]
    }
}

/// A peer's library with no stepper contract: what its users write when their work per input is
/// synchronous (a bare `for await` loop, `flatMap` with a `Future` and a `sink`, a channel
/// drained by a bare loop). The bench measures it on the upstream its peer meets in sync-step,
/// so that the peer's cost splits into its library's (this) and its bridge to the stepper
/// contract (the peer minus this).
public protocol DirectConsumer: Sendable {
    /// Consumes `upstream`, calling `each` with every input in order and `end` with the
    /// completion. Cancelling the result cancels the subscription.
    func consume<Upstream: Publisher>(
        _ upstream: Upstream, each: @escaping @Sendable (Upstream.Output) -> Void,
        end: @escaping @Sendable (Subscribers.Completion<Upstream.Failure>) -> Void
    ) -> AnyCancellable
}
