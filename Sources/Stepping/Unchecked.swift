/// Carries a non-Sendable value across an isolation boundary the compiler cannot see through.
///
/// Used where a lock, not the type system, makes the transfer safe: a design moves the
/// upstream `Subscription` and its state into and out of its critical section. Upstream
/// subscriptions are shared with upstream by nature; Combine requires them to accept
/// `request`/`cancel` from any thread. Never use it to share mutable state without a lock. (The
/// kit has its own for the code that measures and tests the designs.)
@usableFromInline
struct Unchecked<Value>: @unchecked Sendable {
    /// The wrapped value, shared without the compiler's check.
    @usableFromInline var value: Value

    /// Wraps `value`.
    @inlinable
    init(_ value: Value) { self.value = value }
}
