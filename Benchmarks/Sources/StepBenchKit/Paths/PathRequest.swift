import Foundation
import StepBenchScenarios
@_spi(Measurement) import Stepping

/// What the path profiler asks of its child process (`stepbench child`, hidden), as JSON on
/// the child's standard input: drive each path of `subject` once per count in `events`, each in
/// its own measured window. The child answers with a ``PathResponse`` on standard output. The
/// kit builds no command line for it.
public struct PathRequest: Codable, Equatable, Sendable {
    public var subject: Subject
    public var paths: [StepPath]
    public var events: [Int]
    /// The counts of a path whose counts are not exact for `subject` (they follow the schedule,
    /// ``StepPath/countsAreExact(for:)``); nil: `events`.
    public var inexactEvents: [Int]? = nil

    public init(subject: Subject, paths: [StepPath], events: [Int], inexactEvents: [Int]? = nil) {
        self.subject = subject
        self.paths = paths
        self.events = events
        self.inexactEvents = inexactEvents
    }

    /// The counts `path` is driven at.
    public func events(of path: StepPath) -> [Int] {
        path.countsAreExact(for: subject) ? events : inexactEvents ?? events
    }

    /// A request names a subject the child can drive: a design it does not know is an error,
    /// not a request with no windows.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        subject = try c.decode(Subject.self, forKey: .subject)
        if case .foreign(let name) = subject {
            throw DecodingError.dataCorruptedError(
                forKey: .subject, in: c,
                debugDescription:
                    "'\(name)' is not a design of this process (\(SteppingDesign.described.map(\.name)))")
        }
        paths = try c.decode([StepPath].self, forKey: .paths)
        events = try c.decode([Int].self, forKey: .events)
        inexactEvents = try c.decodeIfPresent([Int].self, forKey: .inexactEvents)
    }

    /// The windows this request opens, in order: the paths `design` has, each count.
    public var windows: [PathResponse.Window] {
        paths.filter { $0.isDefined(for: subject) }.flatMap { path in
            events(of: path).map { PathResponse.Window(path: path, events: $0, label: label(path, $0), allocations: 0) }
        }
    }

    /// The window's label, as callgrind's dump part carries it after ``MeasuredWindow/labelPrefix``.
    func label(_ path: StepPath, _ events: Int) -> String {
        "\(path.rawValue) \(subject) \(events)"
    }

    /// Runs the request in this process (the child's side): every window, verified.
    public func run() throws -> PathResponse {
        AllocationCounter.install()
        ThreadedProcess.ensure()
        var windows = self.windows
        for path in paths where path.isDefined(for: subject) {  // warm-ups, outside any window
            _ = try path.drive(subject, events: events(of: path).min() ?? 1, label: nil)
        }
        for i in windows.indices {
            windows[i].allocations = try windows[i].path.drive(
                subject, events: windows[i].events, label: windows[i].label)
        }
        return PathResponse(windows: windows)
    }
}

/// The child's answer: each window's allocations (jemalloc, exact when its thread caches are off).
public struct PathResponse: Codable, Equatable, Sendable {
    public struct Window: Codable, Equatable, Sendable {
        public var path: StepPath
        public var events: Int
        public var label: String
        public var allocations: UInt64
    }

    public var windows: [Window]
}
