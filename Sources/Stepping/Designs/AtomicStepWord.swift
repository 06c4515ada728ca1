/// The `atomic` design's whole state in one 64-bit word.
///
/// ```
/// bits 0–2   tag: subscribing, claiming, subscribed, stepping, dead, completing, completed
/// bit  3     promiseValid: the promise with `promiseID` may still act
/// bit  4     shouldRequestMore: fulfilled with .more during the stepper call
/// bit  5     released: the stepper and subscription fields have been cleared
/// bits 6–9   borrowers: threads that read the fields after their exchange (≤ 15; a 16th
///            waits until one returns, see `AtomicSteppingSubscriber.update`)
/// bits 10–63 promiseID: id of the latest promise (54 bits)
/// ```
///
/// The promise id grows by one per input and never wraps in practice: 2⁵⁴ inputs, even at
/// 10 ns per element, take over five years on one subscriber. A stale promise
/// could only match if it were called at the very moment the live id came round to its own; an
/// overflow traps instead of wrapping (`&+` is not used), so that can never happen silently.
@usableFromInline
struct AtomicStepWord: Equatable {
    @usableFromInline var raw: UInt64

    @usableFromInline
    enum Tag: UInt64 {
        case subscribing = 0
        /// `receive(subscription:)` won the subscription and is storing it (a borrower).
        case claiming = 1
        case subscribed = 2
        case stepping = 3
        case dead = 4
        /// Stepping, and upstream is completing from inside the stepper call: the completing
        /// thread (a borrower) is storing the completion.
        case completing = 5
        /// Stepping, with a stored completion to deliver when the stepper returns (rule C6).
        case completed = 6

        /// Calling the stepper with an input (a completion may be pending).
        @inlinable var isStepping: Bool { self == .stepping || self == .completing || self == .completed }
    }

    @usableFromInline static let tagMask: UInt64 = 0b111
    @usableFromInline static let validBit: UInt64 = 1 << 3
    @usableFromInline static let moreBit: UInt64 = 1 << 4
    @usableFromInline static let releasedBit: UInt64 = 1 << 5
    @usableFromInline static let borrowerShift: UInt64 = 6
    @usableFromInline static let borrowerUnit: UInt64 = 1 << 6
    @usableFromInline static let borrowerMask: UInt64 = 0b1111 << 6
    @usableFromInline static let idShift: UInt64 = 10
    @usableFromInline static let maxID: UInt64 = (1 << 54) - 1

    @inlinable init(raw: UInt64) { self.raw = raw }

    @inlinable static var initial: AtomicStepWord { AtomicStepWord(raw: Tag.subscribing.rawValue) }

    @inlinable var tag: Tag { Tag(rawValue: raw & Self.tagMask)! }
    @inlinable var promiseValid: Bool { raw & Self.validBit != 0 }
    @inlinable var shouldRequestMore: Bool { raw & Self.moreBit != 0 }
    @inlinable var released: Bool { raw & Self.releasedBit != 0 }
    @inlinable var borrowers: UInt64 { (raw & Self.borrowerMask) >> Self.borrowerShift }
    @inlinable var promiseID: UInt64 { raw >> Self.idShift }

    @inlinable func with(tag: Tag) -> Self { Self(raw: (raw & ~Self.tagMask) | tag.rawValue) }
    @inlinable func with(promiseValid: Bool) -> Self {
        Self(raw: promiseValid ? raw | Self.validBit : raw & ~Self.validBit)
    }
    @inlinable func with(shouldRequestMore: Bool) -> Self {
        Self(raw: shouldRequestMore ? raw | Self.moreBit : raw & ~Self.moreBit)
    }
    @inlinable func releasing() -> Self { Self(raw: raw | Self.releasedBit) }
    @usableFromInline static let maxBorrowers: UInt64 = 15
    /// One more borrower. Callers wait while ``borrowersFull`` (never past 15).
    @inlinable func borrowing() -> Self {
        precondition(!borrowersFull, "atomic design: borrowing() past the limit; use update(borrowing: true)")
        return Self(raw: raw + Self.borrowerUnit)
    }
    @inlinable var borrowersFull: Bool { borrowers == Self.maxBorrowers }
    @inlinable func returning() -> Self { Self(raw: raw - Self.borrowerUnit) }
    /// The word for the next input's promise: id + 1, valid, not yet fulfilled.
    @inlinable func nextPromise() -> Self {
        let id = promiseID + 1
        precondition(id <= Self.maxID, "atomic design: promise id space exhausted")
        return Self(raw: (raw & ((1 << Self.idShift) - 1) & ~Self.moreBit) | (id << Self.idShift) | Self.validBit)
    }
    /// Whether a dead word with no borrowers still has to clear its fields.
    @inlinable var mustRelease: Bool { tag == .dead && borrowers == 0 && !released }
    /// This word dead with no valid promise, marked released if nobody borrows the fields any
    /// more (the thread whose exchange writes it must then clear them).
    @inlinable func killed() -> Self {
        let dead = with(tag: .dead).with(promiseValid: false)
        return dead.mustRelease ? dead.releasing() : dead
    }
}
