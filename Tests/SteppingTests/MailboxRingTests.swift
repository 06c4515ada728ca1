@preconcurrency import OpenCombine
import TestSupport
import Testing

@testable import Stepping

/// The actor's mailbox ring on its own: order across the wrap-around and growth, the side
/// queues of the signals that carry references, and the invariants it checks in debug builds.
@Suite("The actor's mailbox ring")
struct MailboxRingTests {
    /// Pops every queued slot, oldest first, taking the side-queue payloads as the drain does.
    static func drain(_ ring: inout MailboxRing) -> [String] {
        var seen: [String] = []
        while let (slot, _) = ring.pop() {
            switch slot.kind {
            case .subscription: seen.append("subscription \((ring.takeSubscription() as! RecordingSubscription).name)")
            case .completion:
                if case .failure = ring.takeCompletion() { seen.append("failure") } else { seen.append("finished") }
            case .promise: seen.append("promise \(slot.promiseID) \(slot.request)")
            case .input: seen.append("input")
            case .cancel: seen.append("cancel")
            case .empty: seen.append("EMPTY")
            }
        }
        return seen
    }

    @Test("first in, first out across the wrap-around; an empty ring pops nothing")
    func test_ring_fifoAcrossTheWrapAround() {
        var ring = MailboxRing()
        #expect(ring.pop() == nil)
        for id in 1...5 { _ = ring.push(.promise(UInt64(id), .more)) }
        for _ in 0..<3 { _ = ring.pop() }
        for id in 6...11 { _ = ring.push(.promise(UInt64(id), .more)) }  // wraps past the end
        #expect(ring.isFull && ring.capacity == MailboxRing.initialCapacity)
        #expect(Self.drain(&ring) == (4...11).map { "promise \($0) more" })
        #expect(ring.count == 0 && ring.pop() == nil)
    }

    @Test("growing keeps the order, and slot k of the queue moves to index k")
    func test_ring_growKeepsOrder() {
        var ring = MailboxRing()
        for id in 1...6 { _ = ring.push(.promise(UInt64(id), .more)) }
        for _ in 0..<4 { _ = ring.pop() }
        for id in 7...12 { _ = ring.push(.promise(UInt64(id), id == 12 ? .cancel : .more)) }
        #expect(ring.isFull)
        ring.grow()
        #expect(ring.capacity == 2 * MailboxRing.initialCapacity && ring.head == 0 && !ring.isFull)
        #expect(ring.slots[0].promiseID == 5 && ring.slots[7].promiseID == 12)
        let index = ring.push(.promise(13, .more))
        #expect(index == 8)
        #expect(Self.drain(&ring) == (5...11).map { "promise \($0) more" } + ["promise 12 cancel", "promise 13 more"])
    }

    @Test("signals that carry references come out in order with their payloads")
    func test_ring_sideQueuesKeepTheirOrder() {
        var ring = MailboxRing()
        let first = RecordingSubscription(name: "first"), second = RecordingSubscription(name: "second")
        _ = ring.push(.subscription(first))
        _ = ring.push(.input)
        _ = ring.push(.completion(.finished))
        _ = ring.push(.completion(.failure(TestError())))
        _ = ring.push(.cancel)
        #expect(Self.drain(&ring) == ["subscription first", "input", "finished", "failure", "cancel"])
        // A subscription's slot is free again once its payload was taken.
        _ = ring.push(.subscription(second))
        #expect(Self.drain(&ring) == ["subscription second"])
    }

    @Test("a second subscription queued before the first was taken stops the process (the gate queues one)")
    func test_ring_secondQueuedSubscriptionTraps() async {
        await #expect(processExitsWith: .failure) {
            var ring = MailboxRing()
            _ = ring.push(.subscription(RecordingSubscription(name: "first")))
            _ = ring.push(.subscription(RecordingSubscription(name: "second")))
        }
    }

    #if DEBUG
        @Test("a push into a full ring stops a debug build (its invariants are checked)")
        func test_ring_pushIntoAFullRingTraps() async {
            await #expect(processExitsWith: .failure) {
                var ring = MailboxRing()
                for _ in 0...MailboxRing.initialCapacity { _ = ring.push(.input) }
            }
        }
    #endif
}
