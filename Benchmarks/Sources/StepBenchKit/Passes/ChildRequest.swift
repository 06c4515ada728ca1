import Foundation

/// What a parent process asks of a `stepbench child` process (hidden), as JSON on the child's
/// standard input; the child answers with JSON on standard output. The kit builds no command
/// line for its children.
public enum ChildRequest: Codable, Equatable, Sendable {
    /// The path profiler's windows (answer: ``PathResponse``).
    case paths(PathRequest)
    /// A pass of `stepbench run`: the timing pass, or a counting build's (answer: a ``ResultsFile``).
    case pass(PassRequest)
    /// One repetition under callgrind for the profiler (answer: its ``RepetitionResult``).
    case profile(ProfileRequest)

    /// Runs the request in this process (the child's side) and returns the answer's JSON.
    public func answer() throws -> Data {
        switch self {
        case .paths(let request): try JSONEncoder().encode(try request.run())
        case .pass(let request): try JSONOutput.encode(try request.run())
        case .profile(let request): try JSONEncoder().encode(try request.run())
        }
    }
}
