import AsyncAlgorithms
import Dispatch
@preconcurrency import OpenCombine
import Stepping

/// Each peer's library in a plain program, as its users write it: on `(0..<n).publisher`, the
/// work per element a call, the loop started as a user starts it (a `Task`, or a `sink`) and
/// awaited to its end. The bench measures it beside the peer's direct row (`direct-sync`: the
/// same library on sync-step's upstream, inside the harness), and once more on sync-step's
/// upstream, so that what separates the two is measured in parts: the upstream (the program on
/// `(0..<n).publisher` against the program on the suite's upstream) and the rest (the program on
/// the suite's upstream against the direct row).
///
/// Each program is written once, generic over its upstream, and instantiated here for both
/// upstreams, so that both are specialised as a user's code is.
public enum PlainPrograms {
    public typealias Each = @Sendable (Int) -> Void

    /// One peer's program: on `(0..<n).publisher`, and on an upstream the caller gives.
    public struct Program: Sendable {
        public let peer: SteppingDesign
        /// The program over `(0..<n).publisher`; returns once its end was awaited.
        public let onSequence: @Sendable (_ n: Int, _ each: @escaping Each) -> Void
        /// The same program over `upstream`; returns once its end was awaited.
        public let onUpstream: @Sendable (_ upstream: AnyPublisher<Int, Never>, _ each: @escaping Each) -> Void
    }

    /// Every peer's program, in the order of ``Peers/all``.
    public static var all: [Program] {
        [
            Program(
                peer: Peers.values, onSequence: { n, each in values((0..<n).publisher, each) },
                onUpstream: { upstream, each in values(upstream, each) }),
            Program(
                peer: Peers.flatMapFuture, onSequence: { n, each in flatMapFuture((0..<n).publisher, each) },
                onUpstream: { upstream, each in flatMapFuture(upstream, each) }),
            Program(
                peer: Peers.asyncChannel, onSequence: { n, each in asyncChannel((0..<n).publisher, each) },
                onUpstream: { upstream, each in asyncChannel(upstream, each) }),
            Program(
                peer: Peers.watermarkChannel, onSequence: { n, each in watermarkChannel((0..<n).publisher, each) },
                onUpstream: { upstream, each in watermarkChannel(upstream, each) }),
        ]
    }

    /// `for await x in upstream.values { each(x) }` in a task, awaited.
    static func values<Upstream: Publisher>(_ upstream: Upstream, _ each: @escaping Each)
    where Upstream.Output == Int, Upstream.Failure == Never {
        let handed = Handed(value: upstream)
        awaited {
            for await x in handed.value.values { each(x) }
        }
    }

    /// `upstream.flatMap(maxPublishers: .max(1)) { x in Future { each(x); $0(.success(())) } }`
    /// into a `sink`, its completion awaited.
    static func flatMapFuture<Upstream: Publisher>(_ upstream: Upstream, _ each: @escaping Each)
    where Upstream.Output == Int, Upstream.Failure == Never {
        let done = DispatchSemaphore(value: 0)
        let cancellable =
            upstream
            .flatMap(maxPublishers: .max(1)) { x in
                Future<Void, Never> { fulfil in
                    each(x)
                    fulfil(.success(()))
                }
            }
            .sink(receiveCompletion: { _ in done.signal() }, receiveValue: {})
        done.wait()
        withExtendedLifetime(cancellable) {}
    }

    /// An `AsyncChannel` fed by a producer task (`for await x in upstream.values { await
    /// channel.send(x) }`) and drained by a consumer task, awaited.
    static func asyncChannel<Upstream: Publisher>(_ upstream: Upstream, _ each: @escaping Each)
    where Upstream.Output == Int, Upstream.Failure == Never {
        let channel = AsyncChannel<Int>()
        let handed = Handed(value: upstream)
        Task {
            for await x in handed.value.values { await channel.send(x) }
            channel.finish()
        }
        awaited {
            for await x in channel { each(x) }
        }
    }

    /// A `MultiProducerSingleConsumerAsyncChannel` (watermark 1…1) fed by a subscriber that
    /// requests when the channel asks for more, drained by a task, awaited.
    static func watermarkChannel<Upstream: Publisher>(_ upstream: Upstream, _ each: @escaping Each)
    where Upstream.Output == Int, Upstream.Failure == Never {
        let (channel, producer) = WatermarkChannelPeer.channel(of: upstream)
        let done = DispatchSemaphore(value: 0)
        Task {
            while let x = try? await channel.next() { each(x.value) }
            done.signal()
        }
        upstream.subscribe(producer)
        done.wait()
    }

    /// Starts `body` in a task and waits for its end on this thread (a user's `await task.value`).
    static func awaited(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }
}
