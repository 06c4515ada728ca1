/// Holds a typed stepper so that ``StepStateMachine`` can keep it as an opaque object.
/// One allocation per subscriber, none per element.
@usableFromInline
final class StepperBox<Input, Failure: Error>: Sendable {
    @usableFromInline
    let call: @Sendable (StepEvent<Input, Failure>) -> Void

    @inlinable
    init(_ call: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.call = call
    }

    /// Recovers the box the machine holds. Only boxes of this exact type are ever stored.
    @inlinable
    static func from(_ object: AnyObject) -> StepperBox {
        unsafeDowncast(object, to: StepperBox.self)
    }
}
