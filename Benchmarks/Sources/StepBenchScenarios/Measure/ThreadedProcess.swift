import Foundation

/// Makes this process one that has started a thread, as any process using Combine with a
/// stepping subscriber is. glibc takes single-threaded fast paths until the first
/// `pthread_create` (`__libc_single_threaded`: a pthread mutex, and so `NSLock`, is then taken
/// with a plain compare-exchange, no `lock` prefix), and never goes back. Without this, a
/// single-thread scenario of the lock-based designs would be measured with locks that a real
/// program never gets. Idempotent.
public enum ThreadedProcess {
    public static func ensure() {
        _ = started
    }

    private static let started: Bool = {
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { _ in nil }, nil) == 0 else { return false }
        pthread_join(thread, nil)
        return true
    }()
}
