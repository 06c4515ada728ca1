/// Holds a typed stepper so that ``StepStateMachine`` can keep it as an opaque object.
/// One allocation per subscriber (two with `input`'s closure), none per element.
@usableFromInline
final class StepperBox<Input, Failure: Error>: Sendable {
    @usableFromInline
    let call: @Sendable (StepEvent<Input, Failure>) -> Void

    /// The stepper called with an input and its promise. The closure is made here, in an
    /// inlinable initialiser that `SteppingDesign.makeSubscriber` (inlinable too) brings to the
    /// caller, where `Input` and `Failure` are concrete: building the `.input` event there needs
    /// no generic-metadata look-up, while the designs' own code, reached through OpenCombine's
    /// unspecialised `AnySubscriber`, would look up `StepEvent<Input, Failure>`'s metadata for
    /// every element (the per-function profile: about 600 instructions per element).
    @usableFromInline
    let input: @Sendable (Input, StepPromise) -> Void

    @inlinable
    init(_ call: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.call = call
        self.input = { call(.input($0, $1)) }
    }

    /// Recovers the box the machine holds. Only boxes of this exact type are ever stored.
    @inlinable
    static func from(_ object: AnyObject) -> StepperBox {
        unsafeDowncast(object, to: StepperBox.self)
    }
}
