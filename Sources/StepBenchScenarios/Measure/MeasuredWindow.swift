/// The measured window of a single-thread scenario as one function, so that callgrind counts
/// instructions inside it and nowhere else (`stepbench profile` passes
/// `--toggle-collect=*MeasuredWindow*`): start-up, set-up, verification and the harness's own
/// bookkeeping stay out of the count. Not inlined and not generic, so it is one symbol that is
/// entered once per repetition.
public enum MeasuredWindow {
    @inline(never)
    public static func run(_ body: () throws -> Void) rethrows {
        try body()
    }
}
