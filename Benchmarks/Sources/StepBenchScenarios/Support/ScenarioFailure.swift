/// A scenario whose outcome did not verify: reported as failed, never as fast.
public struct ScenarioFailure: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Throws a `ScenarioFailure` unless `condition` holds.
@inline(__always)
func verify(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) throws {
    if !condition() { throw ScenarioFailure(message()) }
}
