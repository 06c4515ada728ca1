import Foundation
@preconcurrency import OpenCombine

/// A stepping design: a description (its name and ``Traits``) plus how it makes a subscriber.
///
/// The six built-in designs are declared beside their code (`SteppingDesign.seed`, `.locked`,
/// `.mutex`, `.atomic`, `.actor`, `.actorStream`) and listed by ``allCases``. Any package can
/// describe a design of its own with ``init(name:traits:factory:)`` and hand it to `step`, `pace`
/// and the conformance kit like a built-in (see <doc:WritingADesign>).
///
/// A design is a trivial value (an identity; its description is looked up when asked for), so
/// the measuring code can pass it, and what holds it, without reference counting.
public struct SteppingDesign: RawRepresentable, CaseIterable, Hashable, Sendable, CustomStringConvertible, Codable {
    @usableFromInline let id: ID

    /// Which design: a built-in, or the n-th outside design described in this process.
    @usableFromInline
    enum ID: Hashable, Sendable {
        case seed, locked, mutex, atomic, actor, actorStream
        case outside(Int)
    }

    /// A design's name and traits, declared once, beside its code.
    struct Description: Sendable {
        var name: String
        var traits: Traits
    }

    @usableFromInline
    init(id: ID) { self.id = id }

    /// Describes a design of your own: `factory` makes its subscribers, `traits` say how it
    /// behaves (the conformance kit checks the claims it can). Describe each design once, in a
    /// `static let`: a name identifies one design in a process (results files, child processes),
    /// so describing a second design with a name already taken, a built-in's included, stops the
    /// process, naming it.
    public init(name: String, traits: Traits = Traits(), factory: some SteppingSubscriberFactory) {
        precondition(
            Self.allCases.allSatisfy { $0.name != name },
            "SteppingDesign: '\(name)' is a built-in design's name; give yours another")
        id = .outside(OutsideDesigns.shared.add(Description(name: name, traits: traits), factory, strategy: nil))
    }

    /// Describes a design that subscribes itself (``SteppingStrategy``): given a publisher and a
    /// stepper, it subscribes whatever it needs and returns what cancels it. `step` and `pace`
    /// call the strategy directly; where a subscriber is needed (``makeSubscriber(stepper:)``,
    /// the conformance kit, the bench's scenarios and paths) the design's subscriber is a relay
    /// that is the publisher the strategy subscribes to (its cost is one forwarding call and four
    /// short locks per element). Names are unique, as for ``init(name:traits:factory:)``.
    public init(name: String, traits: Traits = Traits(), strategy: some SteppingStrategy) {
        precondition(
            Self.allCases.allSatisfy { $0.name != name },
            "SteppingDesign: '\(name)' is a built-in design's name; give yours another")
        let factory = StrategySubscriberFactory(
            strategy: strategy, deliversAsynchronously: traits.delivery == .onOwnExecutor)
        id = .outside(OutsideDesigns.shared.add(Description(name: name, traits: traits), factory, strategy: strategy))
    }

    /// Whether the design subscribes itself (``init(name:traits:strategy:)``): its subscribers
    /// (``makeSubscriber(stepper:)``) are relays in front of its strategy.
    public var subscribesItself: Bool {
        if case .outside(let index) = id { OutsideDesigns.shared.strategy(index) != nil } else { false }
    }

    /// Subscribes `stepper` to `upstream` with this design: a subscriber design's subscriber, or a
    /// strategy design's strategy, called directly. Cancelling the result cancels upstream.
    @inlinable
    public func step<Upstream: Publisher>(
        _ upstream: Upstream,
        with stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        if case .outside(let index) = id, let strategy = OutsideDesigns.shared.strategy(index) {
            return strategy.step(upstream, stepper: stepper)
        }
        let subscriber: any SteppingSubscriber<Upstream.Output, Upstream.Failure> = makeSubscriber(stepper: stepper)
        upstream.subscribe(subscriber)
        return AnyCancellable(subscriber)
    }

    /// Designs are equal when they are the same design (names are unique).
    @inlinable
    public static func == (a: SteppingDesign, b: SteppingDesign) -> Bool { a.id == b.id }

    @inlinable
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// The design's name in results, tables and on the command line: lowercase words joined by
    /// `-`, unique among the designs of a run.
    public var name: String { description(of: id).name }

    /// What the suite needs to know about the design: how it delivers, what it allocates, the
    /// rules it breaks, how exact its counts are.
    public var traits: Traits { description(of: id).traits }

    private func description(of id: ID) -> Description {
        switch id {
        case .seed: Self.seedDescription
        case .locked: Self.lockedDescription
        case .mutex: Self.mutexDescription
        case .atomic: Self.atomicDescription
        case .actor: Self.actorDescription
        case .actorStream: Self.actorStreamDescription
        case .outside(let index): OutsideDesigns.shared.description(index)
        }
    }

    /// Creates a subscriber of this design that calls `stepper` for each input and the completion.
    /// Inlinable, so that a built-in design's per-element event is built where the types are
    /// concrete (see `StepperBox.input`); an outside design is made by its factory.
    @inlinable
    public func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        switch id {
        case .seed: SeedSteppingSubscriber(stepper: stepper)
        case .locked: LockedSteppingSubscriber(stepper: stepper)
        case .mutex: MutexSteppingSubscriber(stepper: stepper)
        case .atomic: AtomicSteppingSubscriber(stepper: stepper)
        case .actor: ActorSteppingSubscriber(stepper: stepper)
        case .actorStream: ActorStreamSteppingSubscriber(stepper: stepper)
        case .outside(let index): OutsideDesigns.shared.factory(index).makeSubscriber(stepper: stepper)
        }
    }

    /// The built-in designs, in the order tables show them.
    public static let allCases: [SteppingDesign] = [.seed, .locked, .mutex, .atomic, .actor, .actorStream]

    /// Every design this process knows: the built-ins (``allCases``), then each design described
    /// with ``init(name:traits:factory:)`` so far, in the order they were described. A design
    /// held in a `static let` is described when that property is first read.
    @_spi(Measurement)
    public static var described: [SteppingDesign] {
        allCases + (0..<OutsideDesigns.shared.count).map { SteppingDesign(id: .outside($0)) }
    }

    /// The design `step` and `pace` use unless told otherwise.
    @inlinable public static var `default`: SteppingDesign { .atomic }

    /// The design every report of StepBench compares to: ``seed``, the port of the original.
    @_spi(Measurement)
    public static let reference: SteppingDesign = .seed

    /// The built-in design named `rawValue`, or the outside design described with that name in
    /// this process, or nil. A design is encoded as its name and
    /// decoded this way, so that it can travel to a child process that describes the same designs.
    public init?(rawValue: String) {
        if let design = Self.allCases.first(where: { $0.name == rawValue }) {
            self = design
        } else if let index = OutsideDesigns.shared.index(named: rawValue) {
            self.init(id: .outside(index))
        } else {
            return nil
        }
    }

    /// The design's ``name``.
    public var rawValue: String { name }
    /// The design's ``name``.
    public var description: String { name }

    /// Whether the stepper is called synchronously from `receive(_:)`, so that a `.more`
    /// fulfilled during the call is returned as demand (rule D3). See ``Traits/Delivery``.
    public var deliversSynchronously: Bool { traits.delivery == .synchronous }

    /// Blocks until an asynchronous design (one conforming to ``AsynchronousDelivery``) has
    /// handled every signal `subscriber` has received so far; returns at once for synchronous
    /// designs. For tests and benchmarks that must know a subscriber is quiet. Must not be called
    /// from the stepper.
    @_spi(Measurement)
    public static func waitUntilIdle(_ subscriber: AnyObject) {
        (subscriber as? any AsynchronousDelivery)?.waitUntilIdle()
    }
}

/// Makes the subscribers of a design of your own (``SteppingDesign/init(name:traits:factory:)``).
///
/// Usually a one-line struct: `func makeSubscriber(stepper:) -> any SteppingSubscriber<Input,
/// Failure> { MySubscriber(stepper: stepper) }`. It is called once per subscription, through a
/// protocol (unspecialised): keep per-element work in the subscriber.
public protocol SteppingSubscriberFactory: Sendable {
    /// A new subscriber that calls `stepper` for each input and for the completion.
    func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure>
}

/// The outside designs described in this process, in the order they were described.
@usableFromInline
final class OutsideDesigns: @unchecked Sendable {  // `entries` behind `lock`; entries never change
    @usableFromInline static let shared = OutsideDesigns()
    private let lock = NSLock()
    private var entries: [(SteppingDesign.Description, any SteppingSubscriberFactory, (any SteppingStrategy)?)] = []

    func add(
        _ description: SteppingDesign.Description, _ factory: any SteppingSubscriberFactory,
        strategy: (any SteppingStrategy)?
    ) -> Int {
        lock.withLock {
            precondition(
                !entries.contains { $0.0.name == description.name },
                "SteppingDesign: a design named '\(description.name)' was described already; describe each design once (a static let)"
            )
            entries.append((description, factory, strategy))
            return entries.count - 1
        }
    }

    func description(_ index: Int) -> SteppingDesign.Description { lock.withLock { entries[index].0 } }
    var count: Int { lock.withLock { entries.count } }
    func index(named name: String) -> Int? { lock.withLock { entries.firstIndex { $0.0.name == name } } }
    @usableFromInline func factory(_ index: Int) -> any SteppingSubscriberFactory { lock.withLock { entries[index].1 } }
    @usableFromInline func strategy(_ index: Int) -> (any SteppingStrategy)? { lock.withLock { entries[index].2 } }
}
