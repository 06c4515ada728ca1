import StepBenchScenarios
@_spi(Measurement) import Stepping

extension Comparison {
    /// Exact counts (instructions, synchronising instructions, allocations) are the compiler's
    /// as much as the code's: two files that hold such counts must come from one toolchain, or
    /// their difference says nothing about the change. Throws naming both toolchains. Files
    /// that record no toolchain (older, or profiled children) pass.
    public static func checkToolchains(baseline: ResultsFile, current: ResultsFile) throws {
        let (a, b) = (baseline.machine.swiftVersion, current.machine.swiftVersion)
        let exact = [baseline, current].allSatisfy { !($0.profiles ?? []).isEmpty || !($0.paths ?? []).isEmpty }
        guard exact, !a.isEmpty, !b.isEmpty, a != b else { return }
        throw ResultsError(
            .incompatible,
            "compare: the files' exact counts come from two toolchains (baseline: \(a); current: \(b)); exact counts are only comparable from one toolchain: measure both builds with the same one, on one machine"
        )
    }

    /// Synchronising instructions and allocations per event of a path are counts the code alone
    /// decides: an increase of more than this is a regression (an extra compare-exchange, fence
    /// or allocation per event is 1).
    static let countTolerance = 0.5

    /// The exact comparison of every (path, design) measured in both files whose counts are
    /// exact (``StepPath/countsAreExact(for:)``; the others are not compared): instructions
    /// per event (relative tolerance ``instructionTolerance(design:)``), synchronising instructions and
    /// allocations per event (absolute tolerance ``countTolerance``). A path row measured on one
    /// side only is listed as such (only in the baseline: the gate fails, it stopped checking a
    /// row). The row's scenario column names the path.
    static func pathRows(_ baseline: ResultsFile, _ current: ResultsFile) -> [Row] {
        let old = Dictionary((baseline.paths ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let new = Set((current.paths ?? []).map(\.key))
        var rows: [Row] = []
        for gone in baseline.paths ?? [] where !new.contains(gone.key) {
            rows.append(
                Row(
                    path: gone.path, gone.design, .instructionsPerEvent, gone.instructionsPerEvent, nil,
                    .onlyInBaseline))
        }
        for row in current.paths ?? [] where row.exact {
            guard let before = old[row.key] else {
                // New: listed, so that a baseline that gates nothing here does not pass unseen.
                rows.append(
                    Row(
                        path: row.path, row.design, .instructionsPerEvent, nil, row.instructionsPerEvent,
                        .onlyInCurrent))
                continue
            }
            guard before.exact else { continue }
            let measured: [(Metric, Double, Double, Verdict)] = [
                (
                    .instructionsPerEvent, before.instructionsPerEvent, row.instructionsPerEvent,
                    instructionVerdict(before.instructionsPerEvent, row.instructionsPerEvent, design: row.design)
                ),
                (
                    .synchronisingPerEvent, before.synchronisingPerEvent, row.synchronisingPerEvent,
                    exactVerdict(before.synchronisingPerEvent, row.synchronisingPerEvent, tolerance: countTolerance)
                ),
                (
                    .allocationsPerEvent, before.allocationsPerEvent, row.allocationsPerEvent,
                    exactVerdict(before.allocationsPerEvent, row.allocationsPerEvent, tolerance: countTolerance)
                ),
            ]
            for (metric, a, b, verdict) in measured {
                rows.append(Row(path: row.path, row.design, metric, a, b, verdict))
            }
        }
        return rows
    }

    /// Instructions: a relative tolerance (``instructionTolerance(design:)``).
    static func instructionVerdict(_ a: Double, _ b: Double, design: Subject) -> Verdict {
        let tolerance = instructionTolerance(design: design)
        return b / a > 1 + tolerance ? .regression : b / a < 1 - tolerance ? .improvement : .unchanged
    }

    /// How far two builds' instruction counts of one design may lie apart and still be the same
    /// code: ``instructionTolerance`` (0.5%), unless the design's traits declare their own
    /// (``SteppingDesign/Traits/instructionTolerance``: a count that follows where the binary's
    /// code lies); a design whose counts follow the schedule at least 5%.
    static func instructionTolerance(design: Subject) -> Double {
        instructionTolerance(traits: design.design?.traits)
    }

    /// The tolerance of a design with `traits` (nil: a floor): its own or the gate's, and at
    /// least ``scheduleInstructionTolerance`` when its counts follow the schedule.
    static func instructionTolerance(traits: SteppingDesign.Traits?) -> Double {
        let declared = traits?.instructionTolerance ?? instructionTolerance
        return traits?.countsFollowTheSchedule == true ? max(declared, scheduleInstructionTolerance) : declared
    }
}
