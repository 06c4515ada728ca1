import CProcessGuard
import Foundation

/// The bench's child processes (measuring passes, profiles, torture cases) die with the process
/// that started them, however it ends: a parent stopped by SIGINT or SIGTERM, killed, or crashed
/// leaves no child running. The parent starts each child with ``environment`` added to its own;
/// the child calls ``dieWithParent()`` first thing.
///
/// Linux delivers the death signal when the *thread* that started the child ends, so a child is
/// started from a thread that waits for it (every launcher of the bench does).
public enum ChildGuard {
    static let variable = "STEPBENCH_PARENT_PID"

    /// What a child's environment carries: this process's id.
    public static var environment: [String: String] { [variable: String(getpid())] }

    /// In a child started with ``environment``: asks to be killed when that parent dies, and exits
    /// at once (status 137) if it is gone already. Does nothing in a process started otherwise.
    public static func dieWithParent() {
        guard let text = ProcessInfo.processInfo.environment[variable], let parent = pid_t(text) else { return }
        stepbench_die_with_parent(parent)
    }
}
