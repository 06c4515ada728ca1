import StepBenchScenarios
@_spi(Measurement) import Stepping

extension Comparison {
    /// Where a moved exact count went: for one profiled row or path measured in both files with
    /// a whole profile (``ResultsFile/CallProfile``), the functions that moved it, ranked by the
    /// Δ each is charged with (``FunctionDelta/charged``: its own instructions, and what the calls
    /// it makes more or less often cost), with what is left of the row's Δ; the call edges
    /// whose calls per event changed; the runtime's calls that changed, at their callers.
    public struct Attribution: Codable, Equatable, Sendable {
        /// The path (or the profiled scenario) and what drove it.
        public var target: String
        public var design: String
        /// Instructions per event (per element for a scenario's profile).
        public var baseline: Double
        public var current: Double
        /// Ranked by |``FunctionDelta/charged``|, until they explain all but 5% of the row's Δ
        /// (at most ``kept``).
        public var functions: [FunctionDelta]
        /// The row's Δ less the listed functions' ``FunctionDelta/charged``.
        public var remainder: Double
        /// Edges whose calls per event changed, most first (at most ``kept``).
        public var edges: [EdgeDelta]
        /// Runtime calls (retain, release, allocation, …) whose count per event changed, at
        /// their callers.
        public var runtimeCalls: [RuntimeDelta]
        /// What differs between the two builds on this row, told by its functions' machine code
        /// (``ResultsFile/CallProfile/Function/code``) and its call edges; nil in a comparison
        /// made before it was told.
        public var change: Change?
        /// The functions run on this row (listed or not) whose machine code differs between the
        /// builds, by key.
        public var codeChanged: [String]?

        /// What differs between the two builds on a row.
        public enum Change: String, Codable, Sendable {
            /// The machine code of a function it runs changed (``codeChanged``).
            case code = "code changed"
            /// No function's code changed, but calls did: what the code was given or did
            /// differs (the input, a branch, the schedule).
            case calls = "calls changed, no function's code"
            /// No function's code and no call changed: the count moved with where the code lies
            /// (alignment, a different instruction length of a relocated jump).
            case layout = "layout only (no function's code or calls changed)"
            /// A function that moved has no hash on one side (a file written before hashes were
            /// kept, or code that could not be looked up): which of the three, the profiles
            /// cannot tell.
            case unknown = "code not compared"
        }

        public static let kept = 8

        public var delta: Double { current - baseline }

        public struct FunctionDelta: Codable, Equatable, Sendable {
            public var key: String
            public var exclusive: Double
            public var inclusive: Double
            /// The Δ this function is answerable for: its Δexclusive, plus, for each call edge
            /// out of it whose calls per event changed, Δcalls × what a call on that edge cost
            /// (its inclusive instructions per call), less the same for the changed edges into it.
            /// A retain added to `receive` is charged to `receive` (it calls `swift_retain` once
            /// more), not to `swift_retain` (called more often, each call costing what it did);
            /// a helper called twice as often is charged to its caller. Every edge's term is
            /// added once and taken once, so the charged Δs of all functions sum to their
            /// Δexclusive: the row's Δ less what moved unattributed.
            public var charged: Double
            /// ``charged`` of the row's Δ.
            public var share: Double
            /// What the profiles say moved it: ``Cause``.
            public var cause: Cause
            /// Whether its machine code differs between the builds; nil when either profile has
            /// no hash of it.
            public var codeChanged: Bool? = nil
            /// For a helper of the project's own inlined into others (``ResultsFile/CallProfile/Inlined``),
            /// the functions it was inlined into, whose charges its part left; nil otherwise.
            public var inlinedInto: [String]? = nil
            /// For a function that allocates more (or fewer) objects per event, the functions
            /// whose releases free them, whose charges the freeing left
            /// (``Comparison/chargingFreedToAllocation(_:_:_:terms:)``); nil otherwise.
            public var freedIn: [String]? = nil
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
            /// It calls others more or less often: the changed calls out of it are most of what
            /// it is charged with.
            case itsCalls = "its calls changed"
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
        let pairs = profiledPairs(baseline, current)
        guard !pairs.isEmpty else { return nil }
        return pairs.compactMap { attribution($0.target, $0.design, $0.before, $0.after, $0.a, $0.b) }
    }

    /// A profiled row or exact path both files profiled whole: its counts and whole profiles.
    struct ProfiledPair {
        var target: String, design: String, before: Double, after: Double
        var a: ResultsFile.CallProfile, b: ResultsFile.CallProfile
    }

    /// The rows and exact paths both files profiled whole, but for designs whose counts follow
    /// the schedule (an actor's hand-offs): they move between any two runs, and their moves are
    /// not the code's.
    static func profiledPairs(_ baseline: ResultsFile, _ current: ResultsFile) -> [ProfiledPair] {
        var pairs: [ProfiledPair] = []
        let oldProfiles = Dictionary((baseline.profiles ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        for row in current.profiles ?? [] where row.design.design?.traits.countsFollowTheSchedule != true {
            guard let old = oldProfiles[row.key], let a = old.callProfile, let b = row.callProfile else { continue }
            pairs.append(
                .init(
                    target: row.scenario.rawValue, design: row.design.name, before: old.instructionsPerElement,
                    after: row.instructionsPerElement, a: a.rekeyed(Demangler.key), b: b.rekeyed(Demangler.key)))
        }
        let oldPaths = Dictionary((baseline.paths ?? []).map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        for row in current.paths ?? [] where row.exact {
            guard let old = oldPaths[row.key], old.exact, let a = old.callProfile, let b = row.callProfile else {
                continue
            }
            pairs.append(
                .init(
                    target: row.path.rawValue, design: row.design.name, before: old.instructionsPerEvent,
                    after: row.instructionsPerEvent, a: a.rekeyed(Demangler.key), b: b.rekeyed(Demangler.key)))
        }
        return pairs
    }

    /// A differential flame graph (``FlameGraph``) of each row the comparison attributes
    /// (``attributions``), by the file name it is written under.
    public static func flameGraphs(baseline: ResultsFile, current: ResultsFile) -> [(file: String, graph: FlameGraph)] {
        let moved = Set((attributions(baseline, current) ?? []).map { "\($0.target)\u{0}\($0.design)" })
        return profiledPairs(baseline, current).filter { moved.contains("\($0.target)\u{0}\($0.design)") }.map {
            (
                FlameGraph.fileName(target: $0.target, design: $0.design),
                FlameGraph(
                    title: "\($0.target) \($0.design): where the instructions per event moved", before: $0.a,
                    after: $0.b)
            )
        }
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
        let (outward, inward) = chargedCalls(a.edges, b.edges)
        var moved: [Attribution.FunctionDelta] = []
        let delta = after - before
        for key in Set(old.keys).union(new.keys).union(outward.keys).union(inward.keys) {
            let x = old[key], y = new[key]
            let exclusive = (y?.exclusivePerEvent ?? 0) - (x?.exclusivePerEvent ?? 0)
            let inclusive = (y?.inclusivePerEvent ?? 0) - (x?.inclusivePerEvent ?? 0)
            let out = outward[key] ?? 0
            let charged = exclusive + out - (inward[key] ?? 0)
            guard abs(exclusive) >= threshold || abs(inclusive) >= threshold || abs(charged) >= threshold else {
                continue
            }
            let cause: Attribution.Cause
            if x == nil && y != nil {
                cause = .new
            } else if y == nil && x != nil {
                cause = .gone
            } else if abs(out) >= threshold && abs(out) >= 0.5 * abs(charged) {
                cause = .itsCalls
            } else {
                let (c0, c1) = (calls(into: key, a), calls(into: key, b))
                let callsMoved = abs(c1 - c0) >= threshold
                let e0 = x?.exclusivePerEvent ?? 0, e1 = y?.exclusivePerEvent ?? 0
                let perCall0 = c0 > 0 ? e0 / c0 : e0
                let perCall1 = c1 > 0 ? e1 / c1 : e1
                let costMoved = abs(perCall1 - perCall0) >= max(threshold, 0.005 * abs(perCall0))
                cause =
                    callsMoved && costMoved
                    ? .both : callsMoved ? (c1 > c0 ? .calledMoreOften : .calledLessOften) : .costPerCall
            }
            moved.append(
                .init(
                    key: key, exclusive: exclusive, inclusive: inclusive, charged: charged,
                    share: delta != 0 ? charged / delta : 0, cause: cause,
                    codeChanged: x?.code.flatMap { c0 in y?.code.map { $0 != c0 } }))
        }
        guard abs(delta) >= attributionFloor || moved.contains(where: { abs($0.exclusive) >= attributionFloor }) else {
            return nil
        }
        let terms = edgeTerms(a.edges, b.edges)
        if let partsA = a.inlined, let partsB = b.inlined {
            moved = chargingInlined(moved, partsA, partsB, terms: terms)
        }
        moved = chargingFreedToAllocation(moved, a, b, terms: terms)
        for i in moved.indices { moved[i].share = delta != 0 ? moved[i].charged / delta : 0 }
        moved.sort { abs($0.charged) != abs($1.charged) ? abs($0.charged) > abs($1.charged) : $0.key < $1.key }
        var listed: [Attribution.FunctionDelta] = []
        var explained = 0.0
        for function in moved where listed.count < Attribution.kept {
            if !listed.isEmpty, abs(delta - explained) <= 0.05 * abs(delta) { break }
            listed.append(function)
            explained += function.charged
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
        let (change, codeChanged) = change(a, b, moved: moved)
        return Attribution(
            target: target, design: design, baseline: before, current: after, functions: listed,
            remainder: delta - explained, edges: edges, runtimeCalls: runtime, change: change,
            codeChanged: codeChanged)
    }

    /// What differs between the builds on a row (``Attribution/Change``) and the functions whose
    /// code changed: any function run on both sides whose hashes differ (one that runs on one
    /// side only is reached through a caller whose code or calls changed); else, if a function
    /// whose own instructions moved has no hash on a side, unknown; else calls if any call
    /// edge's count changed, layout if none did.
    static func change(
        _ a: ResultsFile.CallProfile, _ b: ResultsFile.CallProfile, moved: [Attribution.FunctionDelta]
    ) -> (Attribution.Change, [String]) {
        let old = Dictionary(a.functions.map { ($0.key, $0.code) }, uniquingKeysWith: { x, _ in x })
        let new = Dictionary(b.functions.map { ($0.key, $0.code) }, uniquingKeysWith: { x, _ in x })
        let changed = old.keys.filter { key in
            guard let x = old[key] ?? nil, let y = new[key] ?? nil else { return false }
            return x != y
        }.sorted()
        if !changed.isEmpty { return (.code, changed) }
        // a function whose own instructions moved, listed on a side without a hash
        func unhashed(_ side: [String: String?], _ key: String) -> Bool { side[key].map { $0 == nil } ?? false }
        let unknown = moved.contains {
            abs($0.exclusive) >= ResultsFile.CallProfile.threshold && (unhashed(old, $0.key) || unhashed(new, $0.key))
        }
        if unknown { return (.unknown, []) }
        let callsMoved = !changedCalls(a.edges, b.edges, caller: \.caller, callee: \.callee, calls: \.callsPerEvent) {
            c, _, _ in c
        }.isEmpty
        return (callsMoved ? .calls : .layout, [])
    }

    /// What the changed call edges charge each function with (``Attribution/FunctionDelta/charged``):
    /// for every edge whose calls per event changed, Δcalls × its inclusive instructions per call
    /// (the baseline's, or the current profile's for a new edge), at most what the edge's
    /// inclusive instructions moved by in the same direction (nothing when they moved the other
    /// way), added to the caller (`outward`) and taken from the callee (`inward`). A function's
    /// calls to itself are not charged.
    static func chargedCalls(
        _ before: [ResultsFile.CallProfile.Edge], _ after: [ResultsFile.CallProfile.Edge]
    ) -> (outward: [String: Double], inward: [String: Double]) {
        var outward: [String: Double] = [:], inward: [String: Double] = [:]
        for (_, charge) in edgeTerms(before, after) {
            outward[charge.caller, default: 0] += charge.term
            inward[charge.callee, default: 0] += charge.term
        }
        return (outward, inward)
    }

    /// Each changed edge's term of ``chargedCalls(_:_:)``, by "caller\0callee", with the edge's
    /// Δcalls per event; edges with no term are left out.
    static func edgeTerms(
        _ before: [ResultsFile.CallProfile.Edge], _ after: [ResultsFile.CallProfile.Edge]
    ) -> [String: (caller: String, callee: String, term: Double, calls: Double)] {
        func key(_ e: ResultsFile.CallProfile.Edge) -> String { e.caller + "\u{0}" + e.callee }
        let old = Dictionary(before.map { (key($0), $0) }, uniquingKeysWith: { x, _ in x })
        let new = Dictionary(after.map { (key($0), $0) }, uniquingKeysWith: { x, _ in x })
        var terms: [String: (caller: String, callee: String, term: Double, calls: Double)] = [:]
        for name in Set(old.keys).union(new.keys) {
            guard let edge = old[name] ?? new[name], edge.caller != edge.callee else { continue }
            let (c0, c1) = (old[name]?.callsPerEvent ?? 0, new[name]?.callsPerEvent ?? 0)
            guard c1 != c0 else { continue }
            // priced by the side with calls: a call per subscription, not per event, may show as
            // a difference of the two windows at or below zero on one side, or not at all
            guard let priced = [old[name], new[name]].compactMap({ $0 }).first(where: { $0.callsPerEvent > 0 })
            else { continue }
            // Δcalls at a call's price, but never more than the edge's own cost moved (in the same
            // direction): a call that is sometimes the last release (a deinit behind it) would
            // otherwise price one more call at the average of all, deallocation included
            let priced0 = (c1 - c0) * priced.inclusivePerEvent / priced.callsPerEvent
            let moved = (new[name]?.inclusivePerEvent ?? 0) - (old[name]?.inclusivePerEvent ?? 0)
            let term = moved * priced0 > 0 ? (abs(moved) < abs(priced0) ? moved : priced0) : 0
            guard term != 0 else { continue }
            terms[name] = (edge.caller, edge.callee, term, c1 - c0)
        }
        return terms
    }

    /// `moved` with each inlined helper's part (``ResultsFile/CallProfile/Inlined``) taken from
    /// the functions it was inlined into and charged to the helper: its Δ instructions, and of
    /// each changed call edge out of the function the share its call sites made of the edge's
    /// Δcalls (at most all of it), at the edge's term. A retain added in a helper inlined into
    /// four callers is the helper's, not a quarter each. But a helper that runs more often
    /// (``ResultsFile/CallProfile/Inlined/runsPerEvent``: inlined once more, or run more often
    /// by its caller) is its caller's change, as a function called more often is: Δruns at its
    /// cost a run, no more than its part moved, stays with the function. Charges only move, so
    /// they still sum to the same Δ.
    static func chargingInlined(
        _ moved: [Attribution.FunctionDelta], _ before: [ResultsFile.CallProfile.Inlined],
        _ after: [ResultsFile.CallProfile.Inlined],
        terms: [String: (caller: String, callee: String, term: Double, calls: Double)]
    ) -> [Attribution.FunctionDelta] {
        let threshold = ResultsFile.CallProfile.threshold
        func key(_ part: ResultsFile.CallProfile.Inlined) -> String { part.helper + "\u{0}" + part.into }
        func inclusive(_ part: ResultsFile.CallProfile.Inlined?) -> Double {
            (part?.exclusivePerEvent ?? 0) + (part?.calls ?? []).reduce(0) { $0 + $1.inclusivePerEvent }
        }
        let old = Dictionary(before.map { (key($0), $0) }, uniquingKeysWith: { x, _ in x })
        let new = Dictionary(after.map { (key($0), $0) }, uniquingKeysWith: { x, _ in x })
        var helpers: [String: (exclusive: Double, inclusive: Double, calls: Double, into: Set<String>)] = [:]
        var taken: [String: Double] = [:], charges: [String: Double] = [:]
        func isARC(_ callee: String) -> Bool {
            let kind = ResultsFile.CallProfile.RuntimeKind(symbol: callee)
            return kind == .retain || kind == .release
        }
        // The retains and releases without a source location that changed (the optimizer moves
        // ARC out of the helper it was written in, and its location with it), by function:
        // what their calls are charged, shared below among the helpers whose own retains and
        // releases changed the same way, in proportion.
        // Each part's share of the changed call edges out of its function, by callee: the
        // share its call sites made of the edge's Δcalls (at most all of it), at the edge's term.
        var fromEdges: [String: [String: Double]] = [:]
        for name in Set(old.keys).union(new.keys) {
            guard let part = new[name] ?? old[name] else { continue }
            let c0 = Dictionary((old[name]?.calls ?? []).map { ($0.callee, $0.callsPerEvent) }, uniquingKeysWith: +)
            let c1 = Dictionary((new[name]?.calls ?? []).map { ($0.callee, $0.callsPerEvent) }, uniquingKeysWith: +)
            for callee in Set(c0.keys).union(c1.keys) {
                guard let edge = terms[part.into + "\u{0}" + callee], edge.calls != 0 else { continue }
                let share = min(max(((c1[callee] ?? 0) - (c0[callee] ?? 0)) / edge.calls, 0), 1)
                fromEdges[name, default: [:]][callee] = edge.term * share
            }
        }
        var unplacedARC: [String: Double] = [:]
        var placedARC: [String: [String: Double]] = [:]
        for (name, byCallee) in fromEdges {
            guard let part = new[name] ?? old[name] else { continue }
            for (callee, term) in byCallee where isARC(callee) {
                if part.helper == InlinedFrames.unplaced {
                    unplacedARC[part.into, default: 0] += term
                } else {
                    placedARC[part.into, default: [:]][part.helper, default: 0] += term
                }
            }
        }
        for name in Set(old.keys).union(new.keys) {
            guard let part = new[name] ?? old[name], part.helper != InlinedFrames.unplaced else { continue }
            let exclusive = (new[name]?.exclusivePerEvent ?? 0) - (old[name]?.exclusivePerEvent ?? 0)
            var fromCalls = (fromEdges[name] ?? [:]).values.reduce(0, +)
            // its share of the function's unplaced retains and releases
            if let unplaced = unplacedARC[part.into], let placed = placedARC[part.into],
                let mine = placed[part.helper], mine * unplaced > 0
            {
                let all = placed.values.filter { $0 * unplaced > 0 }.reduce(0, +)
                fromCalls += unplaced * mine / all
            }
            var amount = exclusive + fromCalls
            // run more often: the function's (priced as a changed call edge is, edgeTerms)
            let (i0, i1) = (inclusive(old[name]), inclusive(new[name]))
            let (r0, r1) = (old[name]?.runsPerEvent ?? 0, new[name]?.runsPerEvent ?? 0)
            let known =
                (old[name] == nil || old[name]?.runsPerEvent != nil)
                && (new[name] == nil || new[name]?.runsPerEvent != nil)
            if known, abs(r1 - r0) >= threshold {
                let (runs, cost) = r0 > 0 ? (r0, i0) : (r1, i1)
                let priced = runs > 0 ? (r1 - r0) * cost / runs : 0
                let movedBy = i1 - i0
                let term = movedBy * priced > 0 ? (abs(movedBy) < abs(priced) ? movedBy : priced) : 0
                let kept = term * amount > 0 ? (abs(term) < abs(amount) ? term : amount) : 0
                amount -= kept
            }
            guard abs(amount) >= threshold else { continue }
            var helper = helpers[part.helper] ?? (0, 0, 0, [])
            helper.exclusive += exclusive
            helper.inclusive += i1 - i0
            helper.calls += fromCalls
            helper.into.insert(part.into)
            helpers[part.helper] = helper
            taken[part.into, default: 0] += amount
            charges[part.helper, default: 0] += amount
        }
        guard !helpers.isEmpty else { return moved }
        var answer = moved
        for (function, amount) in taken {
            if let i = answer.firstIndex(where: { $0.key == function }) {
                answer[i].charged -= amount
            } else {
                answer.append(
                    .init(key: function, exclusive: 0, inclusive: 0, charged: -amount, share: 0, cause: .costPerCall))
            }
        }
        for (name, helper) in helpers {
            let charged = charges[name] ?? 0
            let into = helper.into.sorted()
            if let i = answer.firstIndex(where: { $0.key == name }) {
                answer[i].charged += charged
                answer[i].inlinedInto = into
            } else {
                answer.append(
                    .init(
                        key: name, exclusive: helper.exclusive, inclusive: helper.inclusive, charged: charged,
                        share: 0, cause: abs(helper.calls) >= 0.5 * abs(charged) ? .itsCalls : .costPerCall,
                        inlinedInto: into))
            }
        }
        return answer
    }

    /// The runtime's function that runs an object's destructor when a release frees it.
    static let releaseDealloc = "_swift_release_dealloc"

    /// Whether `key` is the Swift runtime's or the C library's (not code a change is made in).
    static func isRuntime(_ key: String) -> Bool {
        key.hasPrefix("swift_") || key.hasPrefix("_swift_") || key.contains("swift::")
            || ResultsFile.CallProfile.RuntimeKind(symbol: key) != nil
    }

    /// `moved` with the freeing of what a function now allocates charged to that function, the
    /// allocation site, as a heap profiler charges an object's lifetime: a stored array
    /// allocated in `receive(subscription:)` is freed by the deinit's release, whose code is
    /// otherwise unchanged in intent, and the whole change is the allocation's. Callgrind cannot
    /// tie a free to its allocation, so the model pairs counts: when the runtime's allocations
    /// per event called from the project's (or the library's) code moved by n, and the objects
    /// destroyed by a release (``releaseDealloc``'s changed call edges) moved the same way, the
    /// freeing of up to n of them — their destructors (those edges' terms) and, for each, the
    /// release's slow path (the exclusive instructions per call of `swift_release`, of
    /// ``releaseDealloc`` and of its callers) — is taken from the functions that reach the
    /// release through changed call edges, in proportion to their charges of the same sign (at
    /// most those charges), and charged to the allocating functions, in proportion to their
    /// Δallocations. An allocation freed in the function that made it moves nothing. Charges
    /// only move, so they still sum to the same Δ.
    static func chargingFreedToAllocation(
        _ moved: [Attribution.FunctionDelta], _ a: ResultsFile.CallProfile, _ b: ResultsFile.CallProfile,
        terms: [String: (caller: String, callee: String, term: Double, calls: Double)]
    ) -> [Attribution.FunctionDelta] {
        let threshold = ResultsFile.CallProfile.threshold
        var allocations: [String: Double] = [:]
        for (side, sign) in [(a, -1.0), (b, 1.0)] {
            for call in side.runtimeCalls where call.kind == .allocation && !isRuntime(call.caller) {
                allocations[call.caller, default: 0] += sign * call.callsPerEvent
            }
        }
        let destroyers = terms.values.filter { $0.caller == releaseDealloc }
        let destroyed = destroyers.reduce(0) { $0 + $1.calls }
        let allocators = allocations.filter { $0.value * destroyed > 0 && abs($0.value) >= threshold }
        let allocated = allocators.values.reduce(0, +)
        guard abs(destroyed) >= threshold, !allocators.isEmpty else { return moved }
        let matched = min(abs(destroyed), abs(allocated))
        // the release's slow path, a call: priced on the side where the objects are destroyed
        let side = destroyed > 0 ? b : a
        func perCall(_ key: String) -> Double {
            let calls = side.edges.filter { $0.callee == key && $0.caller != key }.reduce(0) { $0 + $1.callsPerEvent }
            let exclusive = side.functions.first { $0.key == key }?.exclusivePerEvent ?? 0
            return calls > 0 ? exclusive / calls : 0
        }
        let slowPath = Set(side.edges.filter { $0.callee == releaseDealloc }.map(\.caller))
            .union(["swift_release", releaseDealloc]).reduce(0) { $0 + perCall($1) }
        let destructors = destroyers.reduce(0) { $0 + $1.term }
        let amount = destructors * matched / abs(destroyed) + (destroyed > 0 ? 1 : -1) * matched * slowPath
        // the functions whose changed calls reach the release's destructors
        var callers: [String: Set<String>] = [:]
        for term in terms.values { callers[term.callee, default: []].insert(term.caller) }
        var reaching: Set<String> = [], frontier = [releaseDealloc]
        while let key = frontier.popLast() {
            for caller in callers[key] ?? [] where reaching.insert(caller).inserted { frontier.append(caller) }
        }
        let sources = moved.filter {
            reaching.contains($0.key) && allocators[$0.key] == nil && !isRuntime($0.key) && $0.charged * amount > 0
        }
        let available = sources.reduce(0) { $0 + $1.charged }
        guard abs(available) >= threshold else { return moved }
        let taken = abs(amount) < abs(available) ? amount : available
        var answer = moved
        let from = sources.map(\.key).sorted()
        for source in sources {
            if let i = answer.firstIndex(where: { $0.key == source.key }) {
                answer[i].charged -= taken * source.charged / available
            }
        }
        for (key, count) in allocators {
            let charge = taken * count / allocated
            if let i = answer.firstIndex(where: { $0.key == key }) {
                answer[i].charged += charge
                answer[i].freedIn = from
            } else {
                answer.append(
                    .init(
                        key: key, exclusive: 0, inclusive: 0, charged: charge, share: 0, cause: .itsCalls, freedIn: from
                    ))
            }
        }
        return answer
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
