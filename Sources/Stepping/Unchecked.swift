/// Carries a non-Sendable value across an isolation boundary the compiler cannot see through.
///
/// Used where a lock, not the type system, makes the transfer safe: a design moves the
/// upstream `Subscription` and its state into and out of its critical section. Upstream
/// subscriptions are shared with upstream by nature; Combine requires them to accept
/// `request`/`cancel` from any thread. Public for the code that measures and tests the designs
/// (a subscriber handed to the thread that drives it). Never use it to share mutable state
/// without a lock.
public struct Unchecked<Value>: @unchecked Sendable {
    /// The wrapped value, shared without the compiler's check.
    public var value: Value

    /// Wraps `value`.
    @inlinable
    public init(_ value: Value) { self.value = value }
}
