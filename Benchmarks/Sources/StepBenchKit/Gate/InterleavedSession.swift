import Foundation

/// An interleaved A/B session (`stepbench ab`): processes of two builds in adjacent pairs, A B,
/// B A, A B …, so that the machine's drift hits both alike, in batches; after each batch the
/// session looks (`Comparison.paired` with `looks`, each look decided at 1%/looks) and stops once
/// every row is decided, at the first regression, after `looks` looks, or when another look
/// would spend the budget.
public struct InterleavedSession: Sendable {
    public enum Side: String, Sendable { case a = "A", b = "B" }

    /// How a session ended: its last look's verdict (``Status``), pairs run and looks taken.
    public enum Status: Int32, Sendable {
        /// Every row decided, no regression.
        case decided = 0
        case regression = 2
        /// Rows still inconclusive when the looks or the budget ran out.
        case inconclusive = 5
    }

    public var batch: Int
    public var looks: Int
    /// Seconds the runs may take.
    public var budget: Double

    public init(batch: Int, looks: Int, budget: Double) {
        self.batch = batch
        self.looks = looks
        self.budget = budget
    }

    /// The side that runs first in pair `n` (from 1): A in odd pairs, B in even ones.
    public static func order(ofPair n: Int) -> [Side] { n % 2 == 1 ? [.a, .b] : [.b, .a] }

    /// Runs the session: `process(side, n)` runs one process of pair `n` and returns its file;
    /// `look(a, b)` decides the pairs so far (A's files and B's, pair by pair). `now` is the
    /// clock in seconds, `log` gets a line per look. Returns the last look's comparison, its
    /// status, and the pairs and looks made.
    public func run(
        process: (Side, Int) throws -> URL, look: ([URL], [URL]) throws -> (Comparison, Status),
        now: () -> Double = { Date().timeIntervalSince1970 }, log: (String) -> Void
    ) throws -> (comparison: Comparison?, status: Status, pairs: Int, looks: Int) {
        let started = now()
        var a: [URL] = [], b: [URL] = []
        var last: (Comparison, Status)? = nil
        var taken = 0
        while taken < looks {
            taken += 1
            log("look \(taken) of \(looks): pairs \(a.count + 1)–\(a.count + batch) (A B, B A, …)")
            for _ in 0..<batch {
                let n = a.count + 1
                var pair: [Side: URL] = [:]
                for side in Self.order(ofPair: n) { pair[side] = try process(side, n) }
                a.append(pair[.a]!)
                b.append(pair[.b]!)
            }
            guard a.count >= 3 else { continue }
            last = try look(a, b)
            if last!.1 != .inconclusive { break }
            let spent = now() - started
            if taken < looks, spent + spent / Double(taken) > budget {
                log("the budget of \(Int(budget / 60)) minutes would be spent by another look: stopping")
                break
            }
        }
        return (last?.0, last?.1 ?? .inconclusive, a.count, taken)
    }
}
