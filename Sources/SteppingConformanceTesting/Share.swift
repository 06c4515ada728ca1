import Foundation

extension Conformance {
    /// The cases of a parameterized test that this process runs: all of them, or, when the
    /// environment variable `STEPBENCH_TEST_SHARD` is `k/n` (1 ≤ k ≤ n), the k-th of n shares
    /// (case i is in share (i + offset) mod n, so n processes, one per share, run every case
    /// exactly once). Two tests over one list of cases whose heavy cases sit at the same
    /// positions give different offsets, so that those cases land in different processes.
    ///
    /// Why split: a Swift Testing process runs only as many cases at a time as the machine has
    /// cores (Swift concurrency's pool), and conformance cases mostly wait (on child processes,
    /// time limits, parked threads), so one process leaves the cores idle. StepBench's
    /// `scripts/test` runs its heaviest tests, every rule on every design, in three processes:
    ///
    /// ```swift
    /// @Test(arguments: Conformance.share(Conformance.rules))
    /// func rule(_ rule: SteppingRule) {
    ///     expectConformance(rule, of: .semaphore)
    /// }
    /// ```
    public static func share<Cases: Collection>(_ cases: Cases, offset: Int = 0) -> [Cases.Element] {
        guard let text = ProcessInfo.processInfo.environment["STEPBENCH_TEST_SHARD"] else { return Array(cases) }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 2, let k = parts[0], let n = parts[1], n >= 1, (1...n).contains(k) else {
            preconditionFailure("STEPBENCH_TEST_SHARD=\(text): expected k/n with 1 ≤ k ≤ n, e.g. 2/3")
        }
        return cases.enumerated().filter { ($0.offset + offset) % n == k - 1 }.map(\.element)
    }
}
