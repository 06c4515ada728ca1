import Foundation

/// How two measured threads hand work to each other: spinning (``SpinWait``; fair only while
/// spinning threads ≤ cores, and it leaves no core for a third thread such as an actor's queue)
/// or parking (a semaphore: each hand-off wakes a sleeping thread, as a real `pace` on a
/// `DispatchQueue` does, at the price of the hypervisor's wake-up).
public enum HandOff: String, Codable, Sendable {
    case spinYield = "spin-yield"
    case park
}

/// A one-value hand-off between two threads (one producer, one consumer, strictly alternating)
/// that waits as its ``HandOff`` says.
public final class HandOffSlot<Value>: @unchecked Sendable {  // `value` is published by `full` or the semaphore
    public let handOff: HandOff
    private let spin = SpinSlot<Value>()
    private let ready = DispatchSemaphore(value: 0)
    private var value: Value?

    public init(_ handOff: HandOff) { self.handOff = handOff }

    @inline(__always)
    public func put(_ v: Value) {
        switch handOff {
        case .spinYield: spin.put(v)
        case .park:
            value = v
            ready.signal()
        }
    }

    /// Waits for a value, or returns nil once `stop()` returns true (checked while waiting; a
    /// parked taker looks every 10 ms).
    @inline(__always)
    public func take(until stop: () -> Bool = { false }) -> Value? {
        switch handOff {
        case .spinYield: return spin.take(until: stop)
        case .park:
            while ready.wait(timeout: .now() + .milliseconds(10)) == .timedOut {
                if stop() { return nil }
            }
            let v = value
            value = nil
            return v
        }
    }
}
