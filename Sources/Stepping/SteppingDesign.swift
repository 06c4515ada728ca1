@preconcurrency import OpenCombine

/// A stepping design: a description (its name and ``Traits``) plus how it makes a subscriber.
///
/// The six built-in designs are declared beside their code (`SteppingDesign.seed`, `.locked`,
/// `.mutex`, `.atomic`, `.actor`, `.actorStream`) and listed by ``allCases``. Any package can
/// describe a design of its own with ``init(name:traits:factory:)`` and hand it to `step`, `pace`,
/// the conformance kit and the bench like a built-in (see <doc:WritingADesign>).
///
/// Two designs are equal when their names are: a name identifies a design in results files.
public struct SteppingDesign: RawRepresentable, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// The design's name in results, tables and on the command line: lowercase words joined by
    /// `-`, unique among the designs of a run.
    public let name: String
    /// What the suite needs to know about the design: how it delivers, what it allocates, the
    /// rules it breaks, how exact its counts are.
    public let traits: Traits
    @usableFromInline let maker: Maker

    /// How a subscriber is made. The built-ins are cases, so that ``makeSubscriber(stepper:)``,
    /// inlined into its caller, builds their stepper box where `Input` and `Failure` are
    /// concrete (see `StepperBox`); an outside design is called through its factory.
    @usableFromInline
    enum Maker: Sendable {
        case seed, locked, mutex, atomic, actor, actorStream
        case factory(any SteppingSubscriberFactory)
    }

    @usableFromInline
    init(name: String, traits: Traits, maker: Maker) {
        self.name = name
        self.traits = traits
        self.maker = maker
    }

    /// Describes a design of your own: `factory` makes its subscribers, `traits` say how it
    /// behaves (the conformance kit checks the claims it can).
    public init(name: String, traits: Traits = Traits(), factory: some SteppingSubscriberFactory) {
        self.init(name: name, traits: traits, maker: .factory(factory))
    }

    /// Creates a subscriber of this design that calls `stepper` for each input and the completion.
    /// Inlinable, so that a built-in design's per-element event is built where the types are
    /// concrete (see `StepperBox.input`).
    @inlinable
    public func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        switch maker {
        case .seed: SeedSteppingSubscriber(stepper: stepper)
        case .locked: LockedSteppingSubscriber(stepper: stepper)
        case .mutex: MutexSteppingSubscriber(stepper: stepper)
        case .atomic: AtomicSteppingSubscriber(stepper: stepper)
        case .actor: ActorSteppingSubscriber(stepper: stepper)
        case .actorStream: ActorStreamSteppingSubscriber(stepper: stepper)
        case .factory(let factory): factory.makeSubscriber(stepper: stepper)
        }
    }

    /// The built-in designs, in the order tables show them.
    public static var allCases: [SteppingDesign] { [.seed, .locked, .mutex, .atomic, .actor, .actorStream] }

    /// The design `step` and `pace` use unless told otherwise.
    public static var `default`: SteppingDesign { .atomic }

    /// The design every report compares to (the built-in whose traits say ``Traits/isReference``).
    public static var reference: SteppingDesign { allCases.first { $0.traits.isReference }! }

    /// The built-in design named `rawValue`, or nil.
    public init?(rawValue: String) {
        guard let design = Self.allCases.first(where: { $0.name == rawValue }) else { return nil }
        self = design
    }

    /// The design's ``name``.
    public var rawValue: String { name }
    public var description: String { name }

    public static func == (a: SteppingDesign, b: SteppingDesign) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// Whether the stepper is called synchronously from `receive(_:)`, so that a `.more`
    /// fulfilled during the call is returned as demand (rule D3). See ``Traits/Delivery``.
    public var deliversSynchronously: Bool { traits.delivery == .synchronous }

    /// Blocks until an asynchronous design (one conforming to ``AsynchronousDelivery``) has
    /// handled every signal `subscriber` has received so far; returns at once for synchronous
    /// designs. For tests and benchmarks that must know a subscriber is quiet. Must not be called
    /// from the stepper.
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
