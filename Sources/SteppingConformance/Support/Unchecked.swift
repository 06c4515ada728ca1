/// Carries a non-Sendable value across an isolation boundary the compiler cannot see through, for
/// the code that measures and tests the designs: a subscriber handed to the thread that drives
/// it, slots each written by one worker and read after all have joined. Never use it to share
/// mutable state without a lock or a join. (The library keeps its own, internal.)
@_spi(StepBench)
public struct Unchecked<Value>: @unchecked Sendable {
    /// The wrapped value, shared without the compiler's check.
    public var value: Value

    /// Wraps `value`.
    @inlinable
    public init(_ value: Value) { self.value = value }
}
