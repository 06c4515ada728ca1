import StepBenchScenarios
@_spi(Measurement) import Stepping

extension Comparison {
    /// Where a moved exact count went: for one profiled row or path measured in both files with
    /// a whole profile (``ResultsFile/CallProfile``), the functions whose exclusive instructions
    /// per event moved, ranked by how much, with what is left of the row's Δ; the call edges
    /// whose calls per event changed; the runtime's calls that changed, at their callers.
    public struct Attribution: Codable, Equatable, Sendable {
        /// The path (or the profiled scenario) and what drove it.
        public var target: String
        public var design: String
        /// Instructions per event (per element for a scenario's profile).
        public var baseline: Double
        public var current: Double
        /// Ranked by |Δexclusive|, until they explain all but 5% of the row's Δ (at most
        /// ``kept``).
        public var functions: [FunctionDelta]
        /// The row's Δ less the listed functions' Δexclusive.
        public var remainder: Double
        /// Edges whose calls per event changed, most first (at most ``kept``).
        public var edges: [EdgeDelta]
        /// Runtime calls (retain, release, allocation, …) whose count per event changed, at
        /// their callers.
        public var runtimeCalls: [RuntimeDelta]

        public static let kept = 8

        public var delta: Double { current - baseline }

        public struct FunctionDelta: Codable, Equatable, Sendable {
            public var key: String
            public var exclusive: Double
            public var inclusive: Double
            /// Of the row's Δ.
            public var share: Double
            /// What the profiles say moved it: ``Cause``.
            public var cause: Cause
        }

        /// Told from the two profiles alone: the calls into the function per event, and its
        /// exclusive instructions per call.
        public enum Cause: String, Codable, Sendable {
            /// Called as often, more or fewer instructions per call: its own code changed, or
            /// what was inlined into it, or what it is given (a longer string to compare: two
            /// profiles of one build differ so in `memcmp`). Which, the profiles cannot tell.
            case costPerCall = "cost per call"
            /// Called more (or less) often, each call costing what it did.
            case calledMoreOften = "called more often"
            case calledLessOften = "called less often"
            /// Calls and cost per call both moved.
            case both = "calls and cost per call"
            /// Present on one side only.
            case new, gone
        }

        public struct EdgeDelta: Codable, Equatable, Sendable {
            public var caller: String
            public var callee: String
            public var callsBefore: Double
            public var callsAfter: Double
        }

        public struct RuntimeDelta: Codable, Equatable, Sendable {
            public var kind: ResultsFile.CallProfile.RuntimeKind
            public var callee: String
            public var caller: String
            public var callsBefore: Double
            public var callsAfter: Double
        }
    }

    /// The attributions of every profiled row and exact path both files profiled whole, for the
    /// rows whose instructions or any function moved; nil when the files hold no whole profiles on
    /// both sides (files written before they were kept), an empty list when nothing moved.
    static func attributions(_ baseline: ResultsFile, _ current: ResultsFile) -> [Attribution]? {
        var pairs: [(String, String, Double, Double, ResultsFile.CallProfile, ResultsFile.CallProfile)] = []
        let oldProfiles = Dictionary((baseline.profiles ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        // Only counts the code fixes: a design whose counts follow the schedule (an actor's
        // hand-offs) moves between any two runs, and its moves are not the code's.
        for row in current.profiles ?? [] where row.design.design?.traits.countsFollowTheSchedule != true {
            guard let old = oldProfiles[row.key], let a = old.callProfile, let b = row.callProfile else { continue }
            pairs.append(
                (row.scenario.rawValue, row.design.name, old.instructionsPerElement, row.instructionsPerElement, a, b))
        }
        let oldPaths = Dictionary((baseline.paths ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        for row in current.paths ?? [] where row.exact {
            guard let old = oldPaths[row.key], old.exact, let a = old.callProfile, let b = row.callProfile else {
                continue
            }
            pairs.append((row.path.rawValue, row.design.name, old.instructionsPerEvent, row.instructionsPerEvent, a, b))
        }
        guard !pairs.isEmpty else { return nil }
        return pairs.compactMap { attribution($0.0, $0.1, $0.2, $0.3, $0.4, $0.5) }
    }

    /// What a row must move by to be attributed: half an instruction per event (exact counts are
    /// whole numbers of instructions per event; less is the windows' rounding).
    static let attributionFloor = 0.5

    /// One row's attribution, or nil when neither its total nor any function moved (by
    /// ``attributionFloor``).
    static func attribution(
        _ target: String, _ design: String, _ before: Double, _ after: Double,
        _ a: ResultsFile.CallProfile, _ b: ResultsFile.CallProfile
    ) -> Attribution? {
        let threshold = ResultsFile.CallProfile.threshold
        let old = Dictionary(a.functions.map { ($0.key, $0) }, uniquingKeysWith: { x, _ in x })
        let new = Dictionary(b.functions.map { ($0.key, $0) }, uniquingKeysWith: { x, _ in x })
        func calls(into key: String, _ profile: ResultsFile.CallProfile) -> Double {
            profile.edges.filter { $0.callee == key && $0.caller != key }.reduce(0) { $0 + $1.callsPerEvent }
        }
        var moved: [Attribution.FunctionDelta] = []
        let delta = after - before
        for key in Set(old.keys).union(new.keys) {
            let x = old[key], y = new[key]
            let exclusive = (y?.exclusivePerEvent ?? 0) - (x?.exclusivePerEvent ?? 0)
            let inclusive = (y?.inclusivePerEvent ?? 0) - (x?.inclusivePerEvent ?? 0)
            guard abs(exclusive) >= threshold || abs(inclusive) >= threshold else { continue }
            let cause: Attribution.Cause
            if x == nil {
                cause = .new
            } else if y == nil {
                cause = .gone
            } else {
                let (c0, c1) = (calls(into: key, a), calls(into: key, b))
                let callsMoved = abs(c1 - c0) >= threshold
                let perCall0 = c0 > 0 ? x!.exclusivePerEvent / c0 : x!.exclusivePerEvent
                let perCall1 = c1 > 0 ? y!.exclusivePerEvent / c1 : y!.exclusivePerEvent
                let costMoved = abs(perCall1 - perCall0) >= max(threshold, 0.005 * abs(perCall0))
                cause =
                    callsMoved && costMoved
                    ? .both : callsMoved ? (c1 > c0 ? .calledMoreOften : .calledLessOften) : .costPerCall
            }
            moved.append(
                .init(
                    key: key, exclusive: exclusive, inclusive: inclusive,
                    share: delta != 0 ? exclusive / delta : 0, cause: cause))
        }
        guard abs(delta) >= attributionFloor || moved.contains(where: { abs($0.exclusive) >= attributionFloor }) else {
            return nil
        }
        moved.sort { abs($0.exclusive) != abs($1.exclusive) ? abs($0.exclusive) > abs($1.exclusive) : $0.key < $1.key }
        var listed: [Attribution.FunctionDelta] = []
        var explained = 0.0
        for function in moved where listed.count < Attribution.kept {
            if !listed.isEmpty, abs(delta - explained) <= 0.05 * abs(delta) { break }
            listed.append(function)
            explained += function.exclusive
        }

        let edges = changedCalls(a.edges, b.edges, caller: \.caller, callee: \.callee, calls: \.callsPerEvent) {
            Attribution.EdgeDelta(caller: $0.caller, callee: $0.callee, callsBefore: $1, callsAfter: $2)
        }
        let runtime = changedCalls(
            a.runtimeCalls, b.runtimeCalls, caller: \.caller, callee: \.callee, calls: \.callsPerEvent
        ) {
            Attribution.RuntimeDelta(
                kind: $0.kind, callee: $0.callee, caller: $0.caller, callsBefore: $1, callsAfter: $2)
        }
        return Attribution(
            target: target, design: design, baseline: before, current: after, functions: listed,
            remainder: delta - explained, edges: edges, runtimeCalls: runtime)
    }

    /// The calls (edges or runtime calls, by caller and callee) whose count per event changed by
    /// at least the profiles' threshold, most changed first, at most ``Attribution/kept``: each
    /// made by `make` from the call and its counts before and after.
    static func changedCalls<Call, Delta>(
        _ before: [Call], _ after: [Call], caller: (Call) -> String, callee: (Call) -> String,
        calls: (Call) -> Double, make: (Call, Double, Double) -> Delta
    ) -> [Delta] {
        func key(_ call: Call) -> String { caller(call) + "\u{0}" + callee(call) }
        let old = Dictionary(before.map { (key($0), $0) }, uniquingKeysWith: { x, _ in x })
        let new = Dictionary(after.map { (key($0), $0) }, uniquingKeysWith: { x, _ in x })
        var changed: [(call: Call, before: Double, after: Double)] = []
        for name in Set(old.keys).union(new.keys) {
            let (c0, c1) = (old[name].map(calls) ?? 0, new[name].map(calls) ?? 0)
            guard abs(c1 - c0) >= ResultsFile.CallProfile.threshold, let call = new[name] ?? old[name] else { continue }
            changed.append((call, c0, c1))
        }
        changed.sort {
            abs($0.after - $0.before) != abs($1.after - $1.before)
                ? abs($0.after - $0.before) > abs($1.after - $1.before) : key($0.call) < key($1.call)
        }
        return changed.prefix(Attribution.kept).map { make($0.call, $0.before, $0.after) }
    }
}
