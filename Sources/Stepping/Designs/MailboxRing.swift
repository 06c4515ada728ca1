@preconcurrency import OpenCombine

/// The signals an actor mailbox has not yet handed out, in order.
/// Not generic (a push or pop costs no metadata look-up), and its slots are trivial values (a
/// push or pop copies no reference): the rare signals that carry references (a subscription,
/// a completion) keep them in side queues, in the same order; the mailbox keeps an input's
/// value in its typed buffer at the slot's index.
struct MailboxRing {
    /// One slot: what the signal is, and a promise's id and request.
    struct Slot {
        enum Kind: UInt8 { case empty, subscription, input, completion, promise, cancel }
        var kind: Kind = .empty
        var promiseID: StepStateMachine.PromiseID = StepStateMachine.noPromiseID
        var request: StepRequest = .more
    }

    /// A ring of `capacity` slots (a power of two) starting at `head`; `count` are full.
    private(set) var slots = ContiguousArray(repeating: Slot(), count: MailboxRing.initialCapacity)
    private(set) var head = 0
    private(set) var count = 0
    /// The payload of the queued subscription signal: a mailbox queues one subscription in its
    /// life (``ActorGate/answer(_:post:)`` accepts the first; any other is cancelled at once), so
    /// one slot, not a queue: an array allocated its storage on the subscription's first append,
    /// an allocation in every round whose subscription came before `cancel()` and in none whose
    /// `cancel()` came first (cancel-race's count then followed the race).
    private var subscription: (any Subscription)?
    /// The payloads of the queued completion signals, oldest first.
    private var completions: [StepStateMachine.Ending] = []
    /// No more signals are accepted: the machine died (the drain's own queue's flag; the
    /// mailbox keeps the ring's in its state word).
    var closed = false

    static let initialCapacity = 8
    var capacity: Int { slots.count }
    var isFull: Bool { count == slots.count }

    /// Stores `signal` in the next free slot (the ring must not be full); returns its index.
    mutating func push(_ signal: MailboxSignal) -> Int {
        defer { checkInvariants() }
        var slot = Slot()
        switch signal {
        case .subscription(let subscription):
            slot.kind = .subscription
            precondition(self.subscription == nil, "MailboxRing: a second subscription queued")
            self.subscription = subscription
        case .input: slot.kind = .input
        case .completion(let ending):
            slot.kind = .completion
            completions.append(ending)
        case .promise(let id, let request): slot = Slot(kind: .promise, promiseID: id, request: request)
        case .cancel: slot.kind = .cancel
        }
        return push(slot)
    }

    mutating func push(_ slot: Slot) -> Int {
        assert(!isFull, "MailboxRing: push into a full ring (grow first)")
        let index = (head &+ count) & (capacity &- 1)
        slots[index] = slot
        count &+= 1
        return index
    }

    /// Takes the oldest slot and its index.
    mutating func pop() -> (Slot, index: Int)? {
        defer { checkInvariants() }
        guard count > 0 else { return nil }
        let index = head
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        return (slots[index], index)
    }

    /// The payload of a popped `.subscription` or `.completion` slot.
    mutating func takeSubscription() -> any Subscription {
        defer { subscription = nil }
        return subscription!
    }
    mutating func takeCompletion() -> StepStateMachine.Ending { completions.removeFirst() }

    /// Doubles the ring: slot `(head + k) % capacity` moves to `k`.
    mutating func grow() {
        var larger = ContiguousArray(repeating: Slot(), count: capacity * 2)
        for k in 0..<count { larger[k] = slots[(head &+ k) & (capacity &- 1)] }
        slots = larger
        head = 0
        checkInvariants()
    }

    /// The ring's invariants, checked in debug builds after every change (compiled out in
    /// release), in constant time (a flood must not make each push walk the ring): a
    /// power-of-two capacity, `head` inside it, at most `capacity` full slots, the newest and the
    /// oldest full slot a signal, and no more side-queue payloads than full slots (one more while
    /// a popped one waits to be taken).
    @inline(__always)
    func checkInvariants() {
        #if DEBUG
            precondition(capacity > 0 && capacity & (capacity - 1) == 0, "MailboxRing: capacity \(capacity)")
            precondition(head >= 0 && head < capacity, "MailboxRing: head \(head) of \(capacity)")
            precondition(count >= 0 && count <= capacity, "MailboxRing: count \(count) of \(capacity)")
            if count > 0 {
                precondition(slots[head].kind != .empty, "MailboxRing: the oldest full slot is empty")
                precondition(
                    slots[(head &+ count &- 1) & (capacity &- 1)].kind != .empty,
                    "MailboxRing: the newest full slot is empty")
            }
            precondition(
                completions.count <= count + 1,
                "MailboxRing: \(completions.count) completions for \(count) slots"
            )
        #endif
    }
}
