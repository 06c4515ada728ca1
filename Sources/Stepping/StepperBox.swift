/// The part of a stepper box that does not depend on `Input`: the stepper called with a
/// completion. The state machine's actions complete the stepper through it, so performing an
/// action is not generic code. Only ``StepperBox`` is one.
public class AnyStepperBox: @unchecked Sendable {  // immutable after init
    @inlinable
    init() {}

    /// Calls the stepper with the completion (type-erased; only this box's `Failure` is stored).
    /// Once per subscriber: overridden by ``StepperBox``.
    @usableFromInline
    func complete(_ ending: StepStateMachine.Ending) {
        preconditionFailure("only StepperBox is ever stored as a stepper")
    }

    /// Recovers the box the machine holds. Only stepper boxes are ever stored there.
    @inlinable
    static func erased(_ object: AnyObject) -> AnyStepperBox {
        unsafeDowncast(object, to: AnyStepperBox.self)
    }
}

/// Holds a typed stepper so that ``StepStateMachine`` can keep it as an opaque object: a design
/// makes its machine with `StepStateMachine(stepper: StepperBox(stepper))`, gets the box back
/// with ``from(_:)`` from the object ``StepStateMachine/ReceiveInputAction/callStepper(_:promiseID:)``
/// carries, and calls ``input`` with the input and its promise. The actions' `perform()` call the
/// stepper with the completion through it. Two allocations per subscriber (the box, and the
/// context of `input`'s closure), none per element.
///
/// `input` is a closure made here, in an inlinable initialiser that
/// `SteppingDesign.makeSubscriber` (inlinable too) brings to the caller, where `Input` and
/// `Failure` are concrete: building a `StepEvent` there needs no generic-metadata look-up,
/// while the designs' own code, reached through OpenCombine's unspecialised `AnySubscriber`,
/// would look up `StepEvent<Input, Failure>`'s metadata for every element. The designs
/// therefore never build an input's `StepEvent` themselves. The completion, once per
/// subscriber, is an overriding method: it looks the metadata up once and allocates nothing.
public final class StepperBox<Input, Failure: Error>: AnyStepperBox, @unchecked Sendable {
    /// The stepper called with an input and its promise.
    public let input: @Sendable (Input, StepPromise) -> Void
    /// The stepper.
    public let call: @Sendable (StepEvent<Input, Failure>) -> Void

    /// Boxes `call`, the stepper a design was made with.
    @inlinable
    public init(_ call: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.call = call
        self.input = { call(.input($0, $1)) }
        super.init()
    }

    /// The box the machine holds, from the object one of its actions carries. The machine must
    /// have been made with a box of these `Input` and `Failure` (it is not checked).
    @inlinable @inline(__always)
    public static func from(_ object: AnyObject) -> StepperBox {
        unsafeDowncast(object, to: StepperBox.self)
    }

    @usableFromInline
    override func complete(_ ending: StepStateMachine.Ending) {
        call(.completion(ending.typed()))
    }
}
