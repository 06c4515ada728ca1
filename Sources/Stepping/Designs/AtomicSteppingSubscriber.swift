import Foundation
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
///   borrower's reads. A reference is therefore never read after it was released. Clearing
///   happens outside any critical section, so a `deinit` may call back in (rule R3).
/// - borrows are short: a call-out that may take long (`request` from a promise fulfilled on
///   another thread) copies the reference it needs and returns its borrow before calling out.
///   Only the stepper call, `cancel`'s call-out, the claim and a completion hold a borrow across a
///   call, so at most four borrows are long; at the limit of 15 a new borrower waits for a short
///   one to return, so no number of threads can overflow the count.
/// - a completion delivered from inside the stepper call (re-entrantly) is stored in
///   `pendingCompletion` by the completing thread while it borrows (tag `completing`), then
///   published (tag `completed`, releasing); the stepping thread delivers it when the stepper
///   returns (rule C6), as ``StepStateMachine`` does.
///
/// Cost (atomic read-modify-writes): synchronous `.more`: 3 per element (input, promise,
/// stepper returned); `.more` from another thread: 4 (input, stepper returned, promise, and
/// the return of the borrow it took, before it calls `request`). No allocation per element.
@usableFromInline
final class AtomicSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, StepPromiseTarget,
    @unchecked Sendable  // `word` is atomic; the fields follow the borrowing protocol above.
{
    @usableFromInline typealias Word = AtomicStepWord

    @usableFromInline let word = Atomic<UInt64>(AtomicStepWord.initial.raw)
    // The fields below follow the borrowing protocol (see the type's comment), which already
    // orders every access: no two threads write one, and no thread reads one while another
    // writes it. The run-time exclusivity check (`swift_beginAccess`) would re-prove that on
    // every access, on the per-element path, so it is off here.
    @exclusivity(unchecked) @usableFromInline var stepper: StepperBox<Input, Failure>?
    @exclusivity(unchecked) @usableFromInline var subscription: (any Subscription)?
    /// Type-erased like ``StepStateMachine``'s: a stored property of a `Failure`-dependent type
    /// would give this generic class a layout known only at run time.
    @exclusivity(unchecked) @usableFromInline var pendingCompletion: StepStateMachine.Ending?

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.stepper = StepperBox(stepper)
    }

    /// One compare-exchange loop: `transition` returns the new word, or nil to leave it as is.
    /// Returns the word seen and the word written (nil if nothing was written). With
    /// `borrowing: true` the transition may borrow, so it is not tried while the borrow count
    /// is full: the thread yields until a (short) borrow is returned.
    @inlinable @inline(__always)  // every transition: its closure then folds into the caller
    func update(borrowing: Bool = false, _ transition: (Word) -> Word?) -> (old: Word, new: Word?) {
        var old = Word(raw: word.load(ordering: .acquiring))
        while true {
            if borrowing && old.borrowersFull {
                ContentionEvent.borrowYield.count()
                sched_yield()
                old = Word(raw: word.load(ordering: .acquiring))
                continue
            }
            guard let new = transition(old) else { return (old, nil) }
            let (exchanged, original) = word.compareExchange(
                expected: old.raw, desired: new.raw, ordering: .acquiringAndReleasing)
            if exchanged { return (old, new) }
            ContentionEvent.exchangeFailure.count()
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

    /// Drops the stepper, subscription and any pending completion (rule R1). Called once, by the
    /// exchange that set `released`; no borrower remains, so nobody reads the fields any more.
    @inlinable
    func clearFields() {
        stepper = nil
        subscription = nil
        pendingCompletion = nil
    }

    // MARK: Subscriber

    @inlinable
    func receive(subscription: any Subscription) {
        let (_, claimed) = update(borrowing: true) { old in
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
        // Only with demand outstanding: no valid promise (rule S1 against an upstream that
        // ignores demand).
        let (_, new) = update(borrowing: true) { old in
            old.tag == .subscribed && !old.promiseValid ? old.nextPromise().with(tag: .stepping).borrowing() : nil
        }
        guard let new else { return .none }
        stepper.unsafelyUnwrapped.input(input, StepPromise(target: self, id: new.promiseID))
        // The stepper returned. The borrow taken above is returned here, or kept to deliver a
        // completion that arrived during the call.
        while true {
            let (old, written) = update { old in
                switch old.tag {
                case .stepping: old.with(tag: .subscribed).with(shouldRequestMore: false).returning()
                case .completed: old.with(tag: .dead).with(promiseValid: false)
                default: nil
                }
            }
            switch old.tag {
            case .stepping where written != nil:
                return old.shouldRequestMore ? .max(1) : .none
            case .completed where written != nil:
                stepper.unsafelyUnwrapped.complete(pendingCompletion.unsafelyUnwrapped)
                endBorrow()
                return .none
            case .completing:
                ContentionEvent.completingYield.count()
                sched_yield()  // another thread is storing a completion (a misbehaving upstream)
            default:
                endBorrow()  // cancelled during the call: the word is dead
                return .none
            }
        }
    }

    @inlinable
    func receive(completion: Subscribers.Completion<Failure>) {
        let (old, new) = update(borrowing: true) { old in
            switch old.tag {
            case .subscribed: old.with(tag: .dead).with(promiseValid: false).borrowing()
            case .stepping: old.with(tag: .completing).borrowing()
            default: nil
            }
        }
        guard new != nil else { return }
        if old.tag == .subscribed {
            stepper.unsafelyUnwrapped.complete(.init(completion))
            endBorrow()
            return
        }
        // Re-entrant: keep it for the stepping thread, which delivers it when the stepper returns.
        pendingCompletion = .init(completion)
        let (_, published) = update { old in
            old.tag == .completing ? old.with(tag: .completed).returning() : nil
        }
        if published == nil { endBorrow() }  // cancelled meanwhile: dropped with the fields
    }

    // MARK: Cancellable

    @inlinable
    func cancel() {
        let (old, new) = update(borrowing: true) { old in
            switch old.tag {
            case .dead: return nil
            case .subscribing: return old.with(tag: .dead).releasing()  // nothing borrowed
            case .claiming: return old.with(tag: .dead)  // the claimer cancels and releases
            case .subscribed, .stepping: return old.with(tag: .dead).with(promiseValid: false).borrowing()
            case .completing, .completed: return old.killed()  // upstream completed: nothing to cancel
            }
        }
        guard let new else { return }
        switch old.tag {
        case .subscribing: clearFields()
        case .subscribed, .stepping:
            subscription.unsafelyUnwrapped.cancel()
            endBorrow()
        case .completing, .completed:
            if new.released { clearFields() }
        default: break
        }
    }

    // MARK: Promise

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        let (old, new) = update(borrowing: true) { old in
            guard old.promiseValid, old.promiseID == id else { return nil }
            switch (old.tag, request) {
            case (.subscribed, .more): return old.with(promiseValid: false).borrowing()
            case (.stepping, .more), (.completing, .more), (.completed, .more):
                return old.with(promiseValid: false).with(shouldRequestMore: true)
            case (.subscribed, .cancel), (.stepping, .cancel):
                return old.with(tag: .dead).with(promiseValid: false).borrowing()
            case (.completing, .cancel), (.completed, .cancel):
                return old.killed()  // upstream completed: nothing to cancel
            default: return nil
            }
        }
        guard let new else { return }
        switch (old.tag, request) {
        case (.subscribed, .more):
            // `request` may be slow (RS 3.4 is a SHOULD): keep a reference, not a borrow.
            let subscription = self.subscription.unsafelyUnwrapped
            endBorrow()
            subscription.request(.max(1))
        case (.subscribed, .cancel), (.stepping, .cancel):
            subscription.unsafelyUnwrapped.cancel()
            endBorrow()
        case (_, .cancel):
            if new.released { clearFields() }
        default:
            break  // .more during the stepper call: returned as demand by receive(_:)
        }
    }
}

extension SteppingDesign {
    /// Lock-free: the whole state in one atomic word, one compare-exchange per transition. No
    /// allocation per element. The default design.
    @inlinable public static var atomic: SteppingDesign { SteppingDesign(id: .atomic) }

    static let atomicDescription = Description(name: "atomic", traits: Traits())
}
