@preconcurrency import OpenCombine
import Synchronization

/// The `atomic` design: lock-free. The whole state lives in one ``AtomicStepWord``; every
/// transition is one compare-exchange loop that mirrors a ``StepStateMachine`` transition (the
/// model-based test holds it to the machine), and every call-out happens after the exchange.
///
/// Why `Synchronization.Atomic` rather than swift-atomics' `ManagedAtomic`: `Atomic` is stored
/// inline in this object (no second heap object, no extra pointer chase per transition) and
/// needs no dependency; `ManagedAtomic` would allocate its own box.
///
/// The stepper and subscription references live in plain fields. Who may touch them:
/// - they are written before the word publishes them (stepper: in `init`; subscription: in
///   the `claiming` state, published by the exchange to `subscribed`, which releases);
/// - a thread that must call out after its exchange *borrows* them in that same exchange
///   (borrowers + 1, acquiring) and returns them afterwards (borrowers − 1, releasing);
/// - they are cleared exactly once, by the thread whose exchange leaves the word dead with
///   no borrowers (it also sets `released`); that exchange acquires, so it happens after every
///   borrower's reads. A reference is therefore never read after it was released.
///
/// Cost (atomic read-modify-writes): synchronous `.more`: 3 per element (input, promise,
/// stepper returned); `.more` from another thread: 4 (input, stepper returned, promise,
/// return of the borrowed subscription after `request`). No allocation per element.
@usableFromInline
final class AtomicSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, StepPromiseTarget,
    @unchecked Sendable  // `word` is atomic; the two fields follow the borrowing protocol above.
{
    @usableFromInline typealias Word = AtomicStepWord

    @usableFromInline let word = Atomic<UInt64>(AtomicStepWord.initial.raw)
    @usableFromInline var stepper: StepperBox<Input, Failure>?
    @usableFromInline var subscription: (any Subscription)?

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.stepper = StepperBox(stepper)
    }

    /// One compare-exchange loop: `transition` returns the new word, or nil to leave it as is.
    /// Returns the word seen and the word written (nil if nothing was written).
    @inlinable
    func update(_ transition: (Word) -> Word?) -> (old: Word, new: Word?) {
        var old = Word(raw: word.load(ordering: .acquiring))
        while true {
            guard let new = transition(old) else { return (old, nil) }
            let (exchanged, original) = word.compareExchange(
                expected: old.raw, desired: new.raw, ordering: .acquiringAndReleasing)
            if exchanged { return (old, new) }
            old = Word(raw: original)
        }
    }

    /// Gives back a borrow; the exchange that leaves the word dead with no borrowers sets
    /// `released` and clears the fields.
    @inlinable
    func endBorrow() {
        let (old, new) = update { old in
            let returned = old.returning()
            return returned.mustRelease ? returned.releasing() : returned
        }
        if let new, new.released, !old.released { clearFields() }
    }

    /// Drops the stepper and subscription (rule R1). Called once, by the exchange that set
    /// `released`; no borrower remains, so nobody reads the fields any more.
    @inlinable
    func clearFields() {
        stepper = nil
        subscription = nil
    }

    // MARK: Subscriber

    @inlinable
    func receive(subscription: any Subscription) {
        let (_, claimed) = update { old in
            old.tag == .subscribing ? old.with(tag: .claiming).borrowing() : nil
        }
        guard claimed != nil else {
            subscription.cancel()  // second subscription, or already dead (RS 2.5)
            return
        }
        self.subscription = subscription
        let (old, _) = update { old in
            old.tag == .claiming ? old.with(tag: .subscribed).returning() : nil
        }
        if old.tag == .claiming {
            subscription.request(.max(1))
        } else {
            // cancelled while claiming: the cancel left the call-out to us.
            subscription.cancel()
            endBorrow()
        }
    }

    @inlinable
    func receive(_ input: Input) -> Subscribers.Demand {
        let (_, new) = update { old in
            old.tag == .subscribed ? old.nextPromise().with(tag: .stepping).borrowing() : nil
        }
        guard let new else { return .none }
        stepper.unsafelyUnwrapped.call(.input(input, StepPromise(target: self, id: new.promiseID)))
        // The stepper returned.
        let (old, written) = update { old in
            old.tag == .stepping ? old.with(tag: .subscribed).with(shouldRequestMore: false).returning() : nil
        }
        guard written != nil else {
            endBorrow()  // cancelled during the call: the word is dead
            return .none
        }
        return old.shouldRequestMore ? .max(1) : .none
    }

    @inlinable
    func receive(completion: Subscribers.Completion<Failure>) {
        let (_, new) = update { old in
            old.tag == .subscribed ? old.with(tag: .dead).with(promiseValid: false).borrowing() : nil
        }
        guard new != nil else { return }
        stepper.unsafelyUnwrapped.call(.completion(completion))
        endBorrow()
    }

    // MARK: Cancellable

    @inlinable
    func cancel() {
        let (old, new) = update { old in
            switch old.tag {
            case .dead: return nil
            case .subscribing: return old.with(tag: .dead).releasing()  // nothing borrowed
            case .claiming: return old.with(tag: .dead)  // the claimer cancels and releases
            case .subscribed, .stepping: return old.with(tag: .dead).with(promiseValid: false).borrowing()
            }
        }
        guard new != nil else { return }
        switch old.tag {
        case .subscribing: clearFields()
        case .subscribed, .stepping:
            subscription.unsafelyUnwrapped.cancel()
            endBorrow()
        default: break
        }
    }

    // MARK: Promise

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        let (old, new) = update { old in
            guard old.promiseValid, old.promiseID == id else { return nil }
            switch (old.tag, request) {
            case (.subscribed, .more): return old.with(promiseValid: false).borrowing()
            case (.stepping, .more): return old.with(promiseValid: false).with(shouldRequestMore: true)
            case (.subscribed, .cancel), (.stepping, .cancel):
                return old.with(tag: .dead).with(promiseValid: false).borrowing()
            default: return nil
            }
        }
        guard new != nil else { return }
        switch (old.tag, request) {
        case (.subscribed, .more):
            subscription.unsafelyUnwrapped.request(.max(1))
            endBorrow()
        case (_, .cancel):
            subscription.unsafelyUnwrapped.cancel()
            endBorrow()
        default:
            break  // .more during the stepper call: returned as demand by receive(_:)
        }
    }
}
