import Foundation
import Synchronization

/// A one-value hand-off between two threads that spins (then yields) instead of parking.
///
/// Parking a thread (semaphore, condition, GCD) costs 4–90 µs here and measures the hypervisor,
/// not the design (PERFORMANCE-NOTES.md); spinning costs 90–500 ns per round trip but is only
/// fair while spinning threads ≤ cores. After `spinLimit` empty polls the waiter calls
/// `sched_yield()` so a third runnable thread (the actor design's queue) still gets a core.
/// Results label this hand-off "spin-yield".
public final class SpinSlot<Value>: @unchecked Sendable {  // `value` is published by `full`
    private let full = Atomic<Bool>(false)
    private var value: Value?
    public static var spinLimit: Int { 2_000 }

    public init() {}

    /// Publishes `v` (the slot must be empty: one producer, one consumer, strictly alternating).
    @inline(__always)
    public func put(_ v: Value) {
        value = v
        full.store(true, ordering: .releasing)
    }

    /// Waits for a value, or returns nil once `stop()` returns true (checked while waiting).
    @inline(__always)
    public func take(until stop: () -> Bool = { false }) -> Value? {
        var polls = 0
        while !full.load(ordering: .acquiring) {
            polls += 1
            if polls >= Self.spinLimit {
                if stop() { return nil }
                sched_yield()
                polls = 0
            }
        }
        let v = value
        value = nil
        full.store(false, ordering: .releasing)
        return v
    }
}
