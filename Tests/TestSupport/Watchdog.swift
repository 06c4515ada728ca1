import Foundation

/// Turns a deadlock in a single-threaded test into a loud failure instead of a hung CI job.
///
/// `guarded` registers the operation; a background thread checks once a second and, if any
/// operation has run longer than its limit, prints which one (design, step) to stderr and
/// exits the test process with status 3. A design that holds its lock while calling the
/// stepper, `request` or `cancel` deadlocks in the re-entrancy tests and is reported this way.
package final class Watchdog: @unchecked Sendable {  // `inFlight` behind `lock`
    package static let shared = Watchdog()

    private let lock = NSLock()
    private var inFlight: [Int: (label: String, deadline: Date)] = [:]
    private var nextToken = 0

    private init() {
        let thread = Thread { [unowned self] in self.watch() }
        thread.name = "stepbench-watchdog"
        thread.start()
    }

    package func guarded<T>(_ label: @autoclosure () -> String, limit: TimeInterval = 30, _ body: () throws -> T)
        rethrows -> T
    {
        let token = lock.withLock { () -> Int in
            nextToken += 1
            inFlight[nextToken] = (label(), Date().addingTimeInterval(limit))
            return nextToken
        }
        defer { _ = lock.withLock { inFlight.removeValue(forKey: token) } }
        return try body()
    }

    private func watch() {
        while true {
            sleep(1)
            let now = Date()
            let overdue = lock.withLock { inFlight.values.filter { $0.deadline < now }.map(\.label) }
            if !overdue.isEmpty {
                FileHandle.standardError.write(
                    Data(
                        """
                        WATCHDOG: deadlock? still running past its limit: \(overdue.joined(separator: "; "))
                        (a design probably holds its lock while calling the stepper, request or cancel)

                        """.utf8))
                exit(3)
            }
        }
    }
}

/// Shorthand: `guarded("locked: send 3") { ... }`.
package func guarded<T>(_ label: @autoclosure () -> String, limit: TimeInterval = 30, _ body: () throws -> T) rethrows
    -> T
{
    try Watchdog.shared.guarded(label(), limit: limit, body)
}
