import Foundation

// Helpers shared by the test targets (SteppingTests, StepBenchKitTests) and the torture child
// process (SteppingTorture). What the code under test already has (the suite's upstream
// `CountingUpstream`, `SplitMix64`, `Unchecked`) the tests take from there.

/// The failure the tests' publishers and steppers use.
public struct TestError: Error, Equatable {
    public var code: Int
    public init(code: Int = 1) { self.code = code }
}

/// A locked box for bookkeeping shared with Sendable closures.
public final class Box<Value>: @unchecked Sendable {  // `value` behind `lock`
    private let lock = NSLock()
    private var _value: Value
    public init(_ value: Value) { _value = value }
    public var value: Value { lock.withLock { _value } }
    @discardableResult public func mutate<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&_value) } }
}

/// Waits (bounded) until `condition` holds; returns whether it did. Synchronous designs satisfy
/// conditions at once; asynchronous ones (the actors) get time to deliver.
@discardableResult
public func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
        usleep(100)
    }
    return true
}

/// A new, empty folder under the temporary directory.
public func temporaryFolder(_ prefix: String = "stepbench-tests") -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
