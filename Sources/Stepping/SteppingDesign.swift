@preconcurrency import OpenCombine

/// The one list of stepping designs. Every test, benchmark, script and report takes them from
/// `allCases` (scripts through `stepbench list --format json`), so a new design is one file in
/// `Designs/` plus one case here, with its line in the two switches below (the compiler asks
/// for them).
public enum SteppingDesign: String, CaseIterable, Sendable {
    /// Faithful port of the original NSLock subscriber: closures for promises and actions.
    /// The reference row; 2 heap allocations per element.
    case seed
    /// `NSLock` around `StepStateMachine`; value promises, enum actions, no allocation per element.
    case locked
    /// `Synchronization.Mutex` around `StepStateMachine`; otherwise as `locked`.
    case mutex
    /// Lock-free: the whole state in one atomic word, one compare-exchange per transition.
    /// No allocation per element.
    case atomic
    /// An actor owns the state machine; signals reach it through one ordered mailbox (a ring
    /// of recycled slots, drained on the actor's queue until it is empty) and demand goes
    /// upstream from the actor (`receive(_:)` returns `.none`). No allocation per element.
    case actor
    /// The straightforward actor: as `actor`, but its mailbox is an `AsyncStream`. Shows what
    /// the obvious actor costs (allocations and task machinery per signal).
    case actorStream = "actor-stream"

    /// Creates a subscriber of this design that calls `stepper` for each input and the completion.
    /// Inlinable, so that the per-element event is built where the types are concrete (see
    /// `StepperBox.input`).
    @inlinable
    public func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        switch self {
        case .seed: SeedSteppingSubscriber(stepper: stepper)
        case .locked: LockedSteppingSubscriber(stepper: stepper)
        case .mutex: MutexSteppingSubscriber(stepper: stepper)
        case .atomic: AtomicSteppingSubscriber(stepper: stepper)
        case .actor: ActorSteppingSubscriber(stepper: stepper)
        case .actorStream: ActorStreamSteppingSubscriber(stepper: stepper)
        }
    }

    /// Whether the stepper is called synchronously from `receive(_:)`, so that a `.more`
    /// fulfilled during the call is returned as demand (rule D3). Asynchronous designs
    /// (`actor`, `actor-stream`) return `.none` and request the demand instead.
    public var deliversSynchronously: Bool {
        switch self {
        case .seed, .locked, .mutex, .atomic: true
        case .actor, .actorStream: false
        }
    }

    /// Blocks until an asynchronous design (`actor`) has handled every signal `subscriber` has
    /// received so far; returns at once for synchronous designs. For tests and benchmarks that
    /// must know a subscriber is quiet. Must not be called from the stepper.
    public static func waitUntilIdle(_ subscriber: AnyObject) {
        (subscriber as? any AsynchronousDelivery)?.waitUntilIdle()
    }

    /// The design `step` and `pace` use unless told otherwise.
    public static let `default`: SteppingDesign = .atomic
}
