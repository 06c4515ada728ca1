import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The bench's child processes (measuring passes, profiles, the kit's rule and torture children)
/// die with the process that started them, however it ends: a parent stopped by SIGINT or
/// SIGTERM, killed, or crashed leaves no child running. The parent starts each child with
/// ``environment`` added to its own; the child calls ``dieWithParent()`` first thing.
///
/// On Linux the kernel delivers SIGKILL when the parent goes (`PR_SET_PDEATHSIG`); it does so
/// when the *thread* that started the child ends, so a child is started from a thread that waits
/// for it (every launcher of the bench does). Elsewhere a thread of the child checks its parent
/// twice a second (no measuring child runs there: the bench measures on Linux).
@_spi(StepBench)
public enum ChildGuard {
    static let variable = "STEPBENCH_PARENT_PID"

    /// What a child's environment carries: this process's id.
    public static var environment: [String: String] { [variable: String(getpid())] }

    /// In a child started with ``environment``: asks to be killed when that parent dies, and exits
    /// at once (status 137) if it is gone already. Does nothing in a process started otherwise.
    public static func dieWithParent() {
        guard let text = ProcessInfo.processInfo.environment[variable], let parent = pid_t(text) else { return }
        #if os(Linux)
            // prctl is variadic, which Swift does not import; its symbol takes its arguments as a
            // fixed-argument function would on Linux's calling conventions (x86-64, AArch64).
            typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
            if let symbol = dlsym(dlopen(nil, RTLD_NOW), "prctl") {
                let prctl = unsafeBitCast(symbol, to: Prctl.self)
                _ = prctl(1, UInt(SIGKILL), 0, 0, 0)  // PR_SET_PDEATHSIG
            }
        #else
            let watcher = Thread {
                while getppid() == parent { usleep(500_000) }
                _exit(137)
            }
            watcher.start()
        #endif
        if getppid() != parent { _exit(137) }
    }
}
