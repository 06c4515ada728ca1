/// The part of a stepper box that does not depend on `Input`: the stepper called with a
/// completion. The state machine's actions complete the stepper through it, so performing an
/// action is not generic code (a static method of the generic ``StepperBox`` would look up the
/// class's metadata on every call; the per-function profile showed it).
@usableFromInline
class AnyStepperBox: @unchecked Sendable {  // immutable after init
    /// The stepper called with the completion (type-erased; only this box's `Failure` is stored).
    @usableFromInline
    let complete: @Sendable (StepStateMachine.Ending) -> Void

    @inlinable
    init(complete: @escaping @Sendable (StepStateMachine.Ending) -> Void) {
        self.complete = complete
    }

    /// Recovers the box the machine holds. Only stepper boxes are ever stored there.
    @inlinable
    static func from(_ object: AnyObject) -> AnyStepperBox {
        unsafeDowncast(object, to: AnyStepperBox.self)
    }
}

/// Holds a typed stepper so that ``StepStateMachine`` can keep it as an opaque object.
/// One allocation per subscriber (with its two closures), none per element.
///
/// Both closures are made here, in an inlinable initialiser that
/// `SteppingDesign.makeSubscriber` (inlinable too) brings to the caller, where `Input` and
/// `Failure` are concrete: building a `StepEvent` there needs no generic-metadata look-up,
/// while the designs' own code, reached through OpenCombine's unspecialised `AnySubscriber`,
/// would look up `StepEvent<Input, Failure>`'s metadata for every element (about 340
/// instructions per element in the per-function profile). The designs therefore never build
/// a `StepEvent` themselves.
@usableFromInline
final class StepperBox<Input, Failure: Error>: AnyStepperBox, @unchecked Sendable {
    /// The stepper called with an input and its promise.
    @usableFromInline
    let input: @Sendable (Input, StepPromise) -> Void

    @inlinable
    init(_ call: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.input = { call(.input($0, $1)) }
        super.init(complete: { call(.completion($0.typed())) })
    }
}
