import CCallgrind

/// The measured window of a single-thread scenario or path driver: `stepbench profile` counts
/// the instructions of every thread between its open and close and nowhere else, so start-up,
/// set-up, verification and the harness's own bookkeeping stay out of the count. The edges are
/// callgrind client requests (`CCallgrind`): the open writes a dump part labelled
/// ``openLabel`` (which resets every counter; the profiler does not read it), the close writes
/// the window as one dump part labelled `stepbench-window <label>`, and the profiler checks that
/// each run wrote exactly the windows it asked for. Outside valgrind the edges cost a few
/// instructions each.
public enum MeasuredWindow {
    /// The prefix of every window's label, as callgrind's dump parts carry it.
    public static let labelPrefix = "stepbench-window"
    /// The label of the dump part that opens a window (what ran before it; never read).
    public static let openLabel = "stepbench-open"

    @inline(never)
    public static func run(label: String = "", _ body: () throws -> Void) rethrows {
        let full = label.isEmpty ? labelPrefix : "\(labelPrefix) \(label)"
        openLabel.withCString { stepbench_window_open($0) }
        defer { full.withCString { stepbench_window_close($0) } }
        try body()
    }
}
