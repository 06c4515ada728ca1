import Foundation
import Synchronization

/// The suite's one spin-then-yield wait, for hand-offs between measured threads.
///
/// Parking a thread (semaphore, condition, GCD) costs tens of microseconds on a VM and measures
/// the hypervisor, not the design; spinning costs a fraction of a microsecond per round trip but
/// is only fair while spinning threads ≤ cores. So a waiter spins, and after every ``polls``
/// empty polls calls `sched_yield()`, so that a third runnable thread (the actor designs' queue)
/// still gets a core. Results label this hand-off "spin-yield".
public enum SpinWait {
    /// Empty polls between two yields.
    public static var polls: Int { 2_000 }

    /// Polls `ready` until it returns true (true), or until `stop()` holds at one of the yields
    /// (false).
    @inline(__always)
    public static func until(_ ready: () -> Bool, stoppingAtYieldIf stop: () -> Bool = { false }) -> Bool {
        var count = 0
        while !ready() {
            count += 1
            if count >= polls {
                if stop() { return false }
                sched_yield()
                count = 0
            }
        }
        return true
    }
}

/// A one-value hand-off between two threads that waits with ``SpinWait`` instead of parking.
public final class SpinSlot<Value>: @unchecked Sendable {  // `value` is published by `full`
    private let full = Atomic<Bool>(false)
    private var value: Value?

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
        guard SpinWait.until({ full.load(ordering: .acquiring) }, stoppingAtYieldIf: stop) else { return nil }
        let v = value
        value = nil
        full.store(false, ordering: .releasing)
        return v
    }
}
