import Foundation

/// A call from one function to another in a callgrind dump part (raw symbol names).
struct CallEdge: Hashable, Sendable {
    var caller: String
    var callee: String
}

/// How often a ``CallEdge`` was taken, and the instructions those calls cost in all (the callee
/// and everything it called).
struct CallCost: Sendable {
    var count: UInt64 = 0
    var inclusive: UInt64 = 0

    mutating func add(count: UInt64, inclusive: UInt64) {
        self.count += count
        self.inclusive += inclusive
    }
}

extension ResultsFile {
    /// Where one event's (or element's) instructions go, whole: every function by its stable
    /// key, exclusive and inclusive; the call edges between them; and the runtime's calls
    /// (retains, releases, allocations, exclusivity checks, metadata, casts, locks), each placed
    /// at the function that makes it. Per event is the difference of two windows over the
    /// difference of their events, as every exact count of a profile.
    ///
    /// **Conservation:** the functions' exclusive instructions plus ``unattributedPerEvent`` are
    /// the row's instructions per event. The dump parts are read whole (their cost lines must
    /// add up to the part's total, ``CallgrindDump``), so what is unattributed is only what the
    /// list leaves out: functions whose counts moved by less than ``threshold`` per event.
    public struct CallProfile: Codable, Equatable, Sendable {
        /// Functions (and edges, and runtime calls) that moved by less than this per event are
        /// not listed.
        public static let threshold = 0.01

        /// By key, most exclusive instructions first (ties by key).
        public var functions: [Function]
        /// Caller → callee, by keys: calls per event and their inclusive instructions per
        /// event, most inclusive first.
        public var edges: [Edge]
        /// The runtime's calls, each at its caller, by kind, most first.
        public var runtimeCalls: [RuntimeCall]
        /// Instructions per event of the functions not listed.
        public var unattributedPerEvent: Double
        /// The project's own helpers inlined into listed functions (``InlinedFrames``): what
        /// each function's exclusive instructions and calls hold of each helper's code; nil when
        /// the profile was written without them (before they were kept, or a build without
        /// debug information: then nothing is placed).
        public var inlined: [Inlined]? = nil

        /// A helper's code inside a function it was inlined into: its instructions per event
        /// (part of the function's exclusive count) and the calls made from it (part of the
        /// function's edges).
        public struct Inlined: Codable, Equatable, Sendable {
            /// The helper's key.
            public var helper: String
            /// The key of the function it was inlined into.
            public var into: String
            public var exclusivePerEvent: Double
            /// By callee: the calls per event made from the helper's call sites, and their
            /// inclusive instructions per event.
            public var calls: [Call]
            /// How often the helper's inlined copies ran per event, as a call's count would say:
            /// for each copy, the most common execution count of its instructions (each
            /// instruction counts one a run; a branch not taken or a loop's body apart), summed.
            /// A helper inlined once more, or run more often by its caller, runs more often; a
            /// helper whose code changed runs as often. Nil in a file written before it was kept.
            public var runsPerEvent: Double? = nil

            public struct Call: Codable, Equatable, Sendable {
                public var callee: String
                public var callsPerEvent: Double
                public var inclusivePerEvent: Double
            }
        }

        public struct Function: Codable, Equatable, Sendable {
            /// ``Demangler/key(_:)`` of the symbol: generic specialisations, closure numbers,
            /// `merged` and thunk prefixes folded, so that the key survives a rebuild.
            public var key: String
            public var exclusivePerEvent: Double
            /// Its own instructions and those of everything it called.
            public var inclusivePerEvent: Double
            /// A hash of its machine code in the profiled build (``MachineCode``), of every
            /// symbol the key folds together; nil when one could not be looked up (a file
            /// written before the hash was kept, code without a symbol).
            public var code: String? = nil
        }

        public struct Edge: Codable, Equatable, Sendable {
            public var caller: String
            public var callee: String
            public var callsPerEvent: Double
            public var inclusivePerEvent: Double
        }

        public struct RuntimeCall: Codable, Equatable, Sendable {
            public var kind: RuntimeKind
            /// The runtime function called (its key).
            public var callee: String
            /// The function that calls it (its key).
            public var caller: String
            public var callsPerEvent: Double
        }

        /// What the runtime is asked for.
        public enum RuntimeKind: String, Codable, CaseIterable, Sendable {
            case retain, release, allocation, deallocation, exclusivity, metadata, cast, lock

            /// The kind of a call to `symbol` (a raw symbol name), or nil for code that is not
            /// the runtime's.
            public init?(symbol: String) {
                let name = symbol.hasPrefix("$s") ? "" : symbol
                if symbol.hasPrefix("$s") {
                    // Swift symbols: only the type metadata accessors are the runtime's business.
                    guard symbol.hasSuffix("Ma") else { return nil }
                    self = .metadata
                } else if name.hasPrefix("swift_") && (name.contains("etain") || name.hasSuffix("Retain_n")) {
                    self = .retain
                } else if name.hasPrefix("swift_") && name.contains("elease") {
                    self = .release
                } else if [
                    "swift_allocObject", "swift_slowAlloc", "swift_allocBox", "swift_allocEmptyBox", "malloc",
                    "calloc", "realloc", "posix_memalign", "aligned_alloc",
                ].contains(name) {
                    self = .allocation
                } else if [
                    "swift_deallocObject", "swift_slowDealloc", "swift_deallocClassInstance",
                    "swift_deallocUninitializedObject", "swift_deallocBox", "free",
                ].contains(name) {
                    self = .deallocation
                } else if name == "swift_beginAccess" || name == "swift_endAccess" {
                    self = .exclusivity
                } else if name.hasPrefix("swift_getGenericMetadata") || name.hasPrefix("swift_getWitnessTable")
                    || name.hasPrefix("swift_getTypeByMangledName") || name.hasPrefix("swift_getAssociated")
                    || name.hasPrefix("swift_getSingletonMetadata") || name.hasPrefix("swift_checkMetadataState")
                    || name.hasPrefix("swift_getForeignTypeMetadata")
                    || name.hasPrefix("__swift_instantiateConcreteTypeFromMangledName")
                {
                    self = .metadata
                } else if name.hasPrefix("swift_dynamicCast") || name.hasPrefix("swift_conformsToProtocol") {
                    self = .cast
                } else if name.hasPrefix("pthread_mutex_") || name.hasPrefix("pthread_cond_")
                    || name.hasPrefix("pthread_rwlock_") || name.hasPrefix("__lll_") || name == "sched_yield"
                    || name == "syscall"
                {
                    self = .lock
                } else {
                    return nil
                }
            }
        }

        /// What a reader of the whole run needs of it (`stepbench read`, which the report asks):
        /// the `functions` most expensive functions, no edges, and per kind of runtime call its
        /// `callers` busiest callers and one entry, caller ``otherCallers``, for the rest, so
        /// that each kind's total stays whole; still conserving (what is left out is
        /// unattributed).
        public func summary(functions kept: Int = 8, callers: Int = 3) -> CallProfile {
            let listed = Array(functions.prefix(kept))
            let dropped = functions.dropFirst(kept).reduce(0) { $0 + $1.exclusivePerEvent }
            var calls: [RuntimeCall] = []
            for kind in RuntimeKind.allCases {
                let mine = runtimeCalls.filter { $0.kind == kind }  // most first
                calls += mine.prefix(callers)
                let rest = mine.dropFirst(callers).reduce(0) { $0 + $1.callsPerEvent }
                if mine.count > callers {
                    calls.append(
                        RuntimeCall(kind: kind, callee: "", caller: Self.otherCallers, callsPerEvent: rest))
                }
            }
            return CallProfile(
                functions: listed, edges: [], runtimeCalls: calls, unattributedPerEvent: unattributedPerEvent + dropped)
        }

        /// The caller of a ``summary(functions:callers:)``'s entry that stands for the callers
        /// it leaves out.
        public static let otherCallers = "(other callers)"

        /// The profile with every key put through `rekey` again, entries that meet under one key
        /// merged (counts added): a file written before a folding rule (an address key, a cycle
        /// mark) compares with one written after.
        func rekeyed(_ rekeyOnce: (String) -> String) -> CallProfile {
            var known: [String: String] = [:]
            func rekey(_ key: String) -> String {
                if let found = known[key] { return found }
                let found = rekeyOnce(key)
                known[key] = found
                return found
            }
            var functions: [String: Function] = [:], order: [String] = [], codes: [String: [String?]] = [:]
            for f in self.functions {
                let key = rekey(f.key)
                if functions[key] == nil { order.append(key) }
                functions[key, default: Function(key: key, exclusivePerEvent: 0, inclusivePerEvent: 0)]
                    .exclusivePerEvent += f.exclusivePerEvent
                functions[key]!.inclusivePerEvent += f.inclusivePerEvent
                codes[key, default: []].append(f.code)
            }
            for (key, code) in codes { functions[key]!.code = MachineCode.combined(code) }
            var edges: [String: Edge] = [:], edgeOrder: [String] = []
            for e in self.edges {
                let (caller, callee) = (rekey(e.caller), rekey(e.callee))
                let name = caller + "\u{0}" + callee
                if edges[name] == nil { edgeOrder.append(name) }
                edges[name, default: Edge(caller: caller, callee: callee, callsPerEvent: 0, inclusivePerEvent: 0)]
                    .callsPerEvent += e.callsPerEvent
                edges[name]!.inclusivePerEvent += e.inclusivePerEvent
            }
            var calls: [String: RuntimeCall] = [:], callOrder: [String] = []
            for r in runtimeCalls {
                let (caller, callee) = (rekey(r.caller), rekey(r.callee))
                let name = r.kind.rawValue + "\u{0}" + caller + "\u{0}" + callee
                if calls[name] == nil { callOrder.append(name) }
                calls[name, default: RuntimeCall(kind: r.kind, callee: callee, caller: caller, callsPerEvent: 0)]
                    .callsPerEvent += r.callsPerEvent
            }
            return CallProfile(
                functions: order.map { functions[$0]! }, edges: edgeOrder.map { edges[$0]! },
                runtimeCalls: callOrder.map { calls[$0]! }, unattributedPerEvent: unattributedPerEvent,
                inlined: inlined.map { Self.merged($0, rekey) })
        }

        /// Inlined parts with their keys put through `rekey`, parts (and their calls) that meet
        /// under one key merged, in the order first met.
        static func merged(_ parts: [Inlined], _ rekey: (String) -> String) -> [Inlined] {
            var merged: [String: Inlined] = [:], order: [String] = []
            for part in parts {
                let (helper, into) = (rekey(part.helper), rekey(part.into))
                let name = helper + "\u{0}" + into
                if merged[name] == nil {
                    order.append(name)
                    merged[name] = Inlined(
                        helper: helper, into: into, exclusivePerEvent: 0, calls: [],
                        runsPerEvent: part.runsPerEvent == nil ? nil : 0)
                }
                merged[name]!.exclusivePerEvent += part.exclusivePerEvent
                if let runs = part.runsPerEvent {
                    merged[name]!.runsPerEvent = (merged[name]!.runsPerEvent ?? 0) + runs
                }
                for call in part.calls {
                    let callee = rekey(call.callee)
                    if let i = merged[name]!.calls.firstIndex(where: { $0.callee == callee }) {
                        merged[name]!.calls[i].callsPerEvent += call.callsPerEvent
                        merged[name]!.calls[i].inclusivePerEvent += call.inclusivePerEvent
                    } else {
                        merged[name]!.calls.append(
                            Inlined.Call(
                                callee: callee, callsPerEvent: call.callsPerEvent,
                                inclusivePerEvent: call.inclusivePerEvent))
                    }
                }
            }
            return order.map { merged[$0]! }
        }

        /// The profile of the events between `low` and `high`, `span` events apart; `code` holds
        /// the functions' ``MachineCode`` hashes by the names callgrind gives them, `helpers`
        /// the inlined helper of each address that has one, by object (``InlinedFrames``; nil:
        /// not looked up).
        static func between(
            _ low: CallgrindDump, _ high: CallgrindDump, span: Double, code: [String: String] = [:],
            helpers: [String: [UInt64: InlinedFrames.Site]]? = nil
        ) -> CallProfile {
            var names = Set(high.functions.keys).union(low.functions.keys)
                .union(high.calls.keys.flatMap { [$0.caller, $0.callee] })
                .union(low.calls.keys.flatMap { [$0.caller, $0.callee] })
            for found in (helpers ?? [:]).values { names.formUnion(found.values.map(\.helper)) }
            let keys = Demangler.keys(names)
            func key(_ name: String) -> String { keys[name] ?? name }
            var codes: [String: [String?]] = [:]
            for name in Set(high.functions.keys).union(low.functions.keys) {
                codes[key(name), default: []].append(code[name])
            }

            // Exclusive and inclusive per window, by key. A function's inclusive cost is its own
            // plus what its calls cost, but for calls to itself (recursion, already inside).
            func costs(_ dump: CallgrindDump) -> [String: (exclusive: Double, inclusive: Double)] {
                var costs: [String: (exclusive: Double, inclusive: Double)] = [:]
                for (name, cost) in dump.functions {
                    costs[key(name), default: (0, 0)].exclusive += Double(cost)
                    costs[key(name), default: (0, 0)].inclusive += Double(cost)
                }
                for (edge, cost) in dump.calls where key(edge.caller) != key(edge.callee) {
                    costs[key(edge.caller), default: (0, 0)].inclusive += Double(cost.inclusive)
                }
                return costs
            }
            let (lowCosts, highCosts) = (costs(low), costs(high))
            var functions: [Function] = []
            var listed = 0.0
            for name in Set(lowCosts.keys).union(highCosts.keys) {
                let (a, b) = (lowCosts[name] ?? (0, 0), highCosts[name] ?? (0, 0))
                let exclusive = (b.exclusive - a.exclusive) / span, inclusive = (b.inclusive - a.inclusive) / span
                guard abs(exclusive) >= threshold || abs(inclusive) >= threshold else { continue }
                functions.append(
                    Function(
                        key: name, exclusivePerEvent: exclusive, inclusivePerEvent: inclusive,
                        code: MachineCode.combined(codes[name] ?? [])))
                listed += exclusive
            }
            functions.sort {
                $0.exclusivePerEvent != $1.exclusivePerEvent
                    ? $0.exclusivePerEvent > $1.exclusivePerEvent : $0.key < $1.key
            }

            // Edges and runtime calls, by keys.
            func edges(_ dump: CallgrindDump) -> [CallEdge: CallCost] {
                var edges: [CallEdge: CallCost] = [:]
                for (edge, cost) in dump.calls {
                    edges[CallEdge(caller: key(edge.caller), callee: key(edge.callee)), default: CallCost()].add(
                        count: cost.count, inclusive: cost.inclusive)
                }
                return edges
            }
            let (lowEdges, highEdges) = (edges(low), edges(high))
            var kinds: [String: RuntimeKind] = [:]
            for edge in Set(low.calls.keys).union(high.calls.keys) {
                if let kind = RuntimeKind(symbol: edge.callee) { kinds[key(edge.callee)] = kind }
            }
            var edgeList: [Edge] = [], runtimeCalls: [RuntimeCall] = []
            for edge in Set(lowEdges.keys).union(highEdges.keys) {
                let (a, b) = (lowEdges[edge] ?? CallCost(), highEdges[edge] ?? CallCost())
                let calls = (Double(b.count) - Double(a.count)) / span
                let inclusive = (Double(b.inclusive) - Double(a.inclusive)) / span
                if abs(calls) >= threshold || abs(inclusive) >= threshold {
                    edgeList.append(
                        Edge(
                            caller: edge.caller, callee: edge.callee, callsPerEvent: calls, inclusivePerEvent: inclusive
                        ))
                }
                if let kind = kinds[edge.callee], abs(calls) >= threshold {
                    runtimeCalls.append(
                        RuntimeCall(kind: kind, callee: edge.callee, caller: edge.caller, callsPerEvent: calls))
                }
            }
            edgeList.sort {
                $0.inclusivePerEvent != $1.inclusivePerEvent
                    ? $0.inclusivePerEvent > $1.inclusivePerEvent
                    : ($0.caller, $0.callee) < ($1.caller, $1.callee)
            }
            runtimeCalls.sort {
                $0.kind != $1.kind
                    ? RuntimeKind.allCases.firstIndex(of: $0.kind)! < RuntimeKind.allCases.firstIndex(of: $1.kind)!
                    : $0.callsPerEvent != $1.callsPerEvent
                        ? $0.callsPerEvent > $1.callsPerEvent : ($0.caller, $0.callee) < ($1.caller, $1.callee)
            }
            let total = (Double(high.total) - Double(low.total)) / span
            return CallProfile(
                functions: functions, edges: edgeList, runtimeCalls: runtimeCalls,
                unattributedPerEvent: total - listed,
                inlined: helpers.map { inlinedParts(low, high, span: span, helpers: $0, key: key) })
        }

        /// The inlined helpers' parts between two windows (``Inlined``): per (helper, function),
        /// the instructions at the helper's addresses, the calls from its call sites, and how
        /// often its copies ran.
        static func inlinedParts(
            _ low: CallgrindDump, _ high: CallgrindDump, span: Double,
            helpers: [String: [UInt64: InlinedFrames.Site]], key: (String) -> String
        ) -> [Inlined] {
            struct Part {
                var exclusive = 0.0
                var calls: [String: (count: Double, inclusive: Double)] = [:]
                /// By copy: how many of its instructions ran each number of times.
                var copies: [String: [UInt64: Int]] = [:]
                /// Each copy's most common execution count (ties: the smaller), summed.
                var runs: Double {
                    copies.values.reduce(0) { sum, counts in
                        let most = counts.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }
                        return sum + Double(most?.key ?? 0)
                    }
                }
            }
            func parts(_ dump: CallgrindDump) -> [String: Part] {
                var parts: [String: Part] = [:]
                for (object, costs) in dump.addresses {
                    guard let found = helpers[object] else { continue }
                    for (address, spent) in costs {
                        guard let site = found[address] else { continue }
                        let name = key(site.helper) + "\u{0}" + key(spent.function)
                        parts[name, default: Part()].exclusive += Double(spent.cost)
                        parts[name]!.copies[site.instance, default: [:]][spent.cost, default: 0] += 1
                    }
                }
                for (site, cost) in dump.callSites {
                    guard let helper = helpers[site.object]?[site.address]?.helper else { continue }
                    let name = key(helper) + "\u{0}" + key(site.edge.caller)
                    let callee = key(site.edge.callee)
                    let old = parts[name, default: Part()].calls[callee] ?? (0, 0)
                    // a call site may be all of the part a window ran (no instruction of it counted)
                    parts[name, default: Part()].calls[callee] = (
                        old.count + Double(cost.count), old.inclusive + Double(cost.inclusive)
                    )
                }
                return parts
            }
            let (a, b) = (parts(low), parts(high))
            var answer: [Inlined] = []
            for name in Set(a.keys).union(b.keys).sorted() {
                let (x, y) = (a[name] ?? Part(), b[name] ?? Part())
                let exclusive = (y.exclusive - x.exclusive) / span
                var calls: [Inlined.Call] = []
                for callee in Set(x.calls.keys).union(y.calls.keys).sorted() {
                    let (c0, c1) = (x.calls[callee] ?? (0, 0), y.calls[callee] ?? (0, 0))
                    let count = (c1.count - c0.count) / span, inclusive = (c1.inclusive - c0.inclusive) / span
                    if abs(count) >= threshold || abs(inclusive) >= threshold {
                        calls.append(Inlined.Call(callee: callee, callsPerEvent: count, inclusivePerEvent: inclusive))
                    }
                }
                guard abs(exclusive) >= threshold || !calls.isEmpty else { continue }
                let keys = name.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
                answer.append(
                    Inlined(
                        helper: keys[0], into: keys[1], exclusivePerEvent: exclusive, calls: calls,
                        runsPerEvent: (y.runs - x.runs) / span))
            }
            return answer
        }
    }
}
