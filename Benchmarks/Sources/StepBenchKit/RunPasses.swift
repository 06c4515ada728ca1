import Foundation
import StepBenchScenarios

/// How `stepbench run` splits a run into passes and processes.
///
/// **Two passes.** Timing runs with the allocator as users run it: jemalloc with its thread
/// caches (its default), in a child process started with `MALLOC_CONF=tcache:true`. Exact
/// allocation counts need the thread caches off (every allocation then reaches the arena
/// counters), which makes each allocation slower, so they come from a second, shorter pass in
/// this process (the built-in `tcache:false`): timing taken there would tax the designs that
/// allocate (seed, actor) and not the others. In the combined file every repetition's timing
/// is from the timing pass and its `allocations` from the allocation pass.
///
/// **Process isolation** (`--fork`): every round of the timing pass in a fresh process, merged
/// as `stepbench merge` does (each process one repetition). Use it to publish a timing claim:
/// a process's heap and code layout move its numbers by a few percent, and one process per
/// repetition samples that instead of freezing it.
public enum RunPasses {
    public enum Pass: String, CaseIterable, Sendable {
        /// Timing pass, then allocation pass, combined (the default).
        case both
        /// Only the timing pass (in this process; its allocation counts are not exact).
        case timing
        /// Only the allocation pass (in this process, thread caches off).
        case allocations
    }

    /// Repetitions of the allocation pass: enough to see a count that follows thread timing vary.
    public static func allocationRepetitions(timing: Int) -> Int { min(timing, 3) }

    /// The timing pass's file with each repetition's `allocations` taken from the allocation
    /// pass's repetitions of the same row (cyclically; exact counts repeat anyway), summaries
    /// and ratios recomputed. A row that failed in either pass is failed.
    public static func combine(timing: ResultsFile, allocations: ResultsFile) throws -> ResultsFile {
        var file = try fill(
            timing, from: allocations, pass: "allocation", \.allocations, \.allocationRepetitions, elements: .record)
        file.machine.allocator = "timing: \(timing.machine.allocator); allocations: \(allocations.machine.allocator)"
        return file
    }

    /// What ``fill(_:from:pass:_:_:elements:)`` does with the elements a pass counted over
    /// (``RepetitionResult/countedElements``): the first pass that fills records them; a later
    /// one must have counted over the same, as both passes' counts share the one field.
    enum CountedElements { case record, mustMatch }

    /// `file` with each repetition's `value` taken from `other`'s repetitions of the same row
    /// (cyclically: `other` measured fewer; how many carry their own goes to `counted`), and the
    /// elements they were counted over, summaries and ratios recomputed. A row that `other` did
    /// not measure is an error; one that failed there is failed.
    static func fill<Value>(
        _ file: ResultsFile, from other: ResultsFile, pass: String,
        _ value: WritableKeyPath<RepetitionResult, Value>, _ counted: WritableKeyPath<ResultsFile.Row, Int?>,
        elements: CountedElements
    ) throws -> ResultsFile {
        let measured = Dictionary(other.rows.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        var file = file
        for i in file.rows.indices {
            guard let source = measured[file.rows[i].key] else {
                throw ResultsError(.missingInput, "passes: the \(pass) pass did not measure \(file.rows[i].key)")
            }
            guard source.status == .ok, !source.repetitions.isEmpty else {
                if file.rows[i].status == .ok { file.rows[i].status = source.status == .ok ? .failed : source.status }
                file.rows[i].failure = file.rows[i].failure ?? "\(pass) pass: \(source.failure ?? "failed")"
                file.rows[i].summary = nil
                continue
            }
            guard file.rows[i].status == .ok else { continue }
            for r in file.rows[i].repetitions.indices {
                let from = source.repetitions[r % source.repetitions.count]
                let over = from.countedElements ?? from.elements
                let countedElements = over == file.rows[i].repetitions[r].elements ? nil : over
                switch elements {
                case .record: file.rows[i].repetitions[r].countedElements = countedElements
                case .mustMatch:
                    guard file.rows[i].repetitions[r].countedElements == countedElements else {
                        throw ResultsError(
                            .incompatible,
                            "passes: the \(pass) pass counted \(file.rows[i].key) over \(over) elements, the pass before it over \(file.rows[i].repetitions[r].countedElements ?? file.rows[i].repetitions[r].elements)"
                        )
                    }
                }
                file.rows[i].repetitions[r][keyPath: value] = from[keyPath: value]
            }
            file.rows[i][keyPath: counted] = min(source.repetitions.count, file.rows[i].repetitions.count)
            file.rows[i].summary = ResultsFile.Summary(
                file.rows[i].repetitions, side: file.rows[i].scenario.sideMetric,
                counted: file.rows[i].contentionRepetitions)
        }
        file.computeRatios()
        return file
    }
}
