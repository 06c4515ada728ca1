@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// A strategy that steps through a built-in design: a design that subscribes itself, whose
/// behaviour is known, so that the relay in front of strategies (`makeSubscriber` on a strategy
/// design) can be checked against the state machine.
@_spi(StepBench)
public struct Delegating: SteppingStrategy {
    public let design: SteppingDesign
    public init(_ design: SteppingDesign) { self.design = design }

    public func step<Upstream: Publisher>(
        _ upstream: Upstream,
        stepper: @escaping @Sendable (StepEvent<Upstream.Output, Upstream.Failure>) -> Void
    ) -> AnyCancellable {
        upstream.step(design: design, with: stepper)
    }
}

@_spi(StepBench)
extension SteppingDesign {
    /// `atomic` and `actor` behind the relay, described once per process.
    public static let relayedAtomic = SteppingDesign(
        name: "relayed-atomic", traits: SteppingDesign.atomic.traits, strategy: Delegating(.atomic))
    public static let relayedActor = SteppingDesign(
        name: "relayed-actor", traits: SteppingDesign.actor.traits, strategy: Delegating(.actor))

    /// Both, in the order above.
    public static let relayedDesigns = [relayedAtomic, relayedActor]
}
