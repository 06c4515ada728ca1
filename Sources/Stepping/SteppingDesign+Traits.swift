extension SteppingDesign {
    /// What the conformance kit, the scenarios and the gate need to know about a design, declared
    /// once, beside it. The defaults describe a well-behaved synchronous design.
    public struct Traits: Sendable, Hashable {
        /// Where the stepper is called.
        public enum Delivery: String, Sendable, Hashable, Codable {
            /// From inside `receive(_:)`, on upstream's thread: a `.more` fulfilled during the
            /// call is returned as demand (rule D3), and a later `.more` requests on the
            /// fulfilling thread (D4).
            case synchronous
            /// On the design's own executor (an actor): `receive(_:)` returns `.none` and demand
            /// is requested from there. The design conforms to ``AsynchronousDelivery``, so that
            /// tests and benchmarks can wait until it is idle.
            case onOwnExecutor = "on-own-executor"
        }

        /// A rule the design knowingly breaks, and how.
        public struct KnownIssue: Sendable, Hashable {
            /// The rule (docs/CONFORMANCE.md).
            public var rule: SteppingRule
            /// What goes wrong, in a sentence.
            public var reason: String
            /// The issue shows in some runs only (it depends on thread timing the checks do not
            /// control): a run whose checks do not show it still conforms, instead of reporting
            /// the declaration stale.
            public var isIntermittent: Bool
            /// Breaking the rule can take the process down or stall it (a crash, a data race, a
            /// stream that stops): a scenario that races this rule on several threads leaves the
            /// design out, and says so in its row, instead of measuring nothing.
            public var isFatal: Bool

            /// A known issue of `rule`.
            public init(_ rule: SteppingRule, _ reason: String, isIntermittent: Bool = false, isFatal: Bool = false) {
                self.rule = rule
                self.reason = reason
                self.isIntermittent = isIntermittent
                self.isFatal = isFatal
            }
        }

        /// Where the stepper is called.
        public var delivery: Delivery
        /// Whether the design allocates on the heap for each element (rule R2: a design that
        /// claims none is measured to make none, and one that declares some to make some).
        public var allocatesPerElement: Bool
        /// Whether the design allocates in its transitions (a closure per promise or per action),
        /// so that where two threads race transitions the schedule decides how many allocations
        /// it makes: its allocation counts there are timing, not exact.
        public var allocatesPerTransition: Bool
        /// The rules the design knowingly breaks. The conformance kit reports each as a known
        /// issue, and fails if one stops failing; a path that needs a broken rule (a re-entrant
        /// completion needs C6) is not driven for the design.
        public var knownIssues: [KnownIssue]
        /// How far two builds' instruction counts of this design may lie apart and still be the
        /// same code, as a fraction; nil for the gate's own (0.5%). A design whose count follows
        /// where the binary's code lies (a runtime cache that hashes addresses) needs more.
        /// StepBench's gate reads it (``measured(instructionTolerance:countsFollowTheSchedule:)``).
        @_spi(Measurement) public var instructionTolerance: Double?
        /// Whether an event driven from one thread may be handled on another (a task, a queue
        /// the design wakes): then how often threads park and wake, and so the design's
        /// instruction and allocation counts, follow the schedule, and the gate shows them
        /// without holding them exact. Nil: what ``delivery`` implies (an asynchronous design
        /// hands events off; a synchronous one does not).
        @_spi(Measurement) public var countsFollowTheSchedule: Bool {
            countsFollowSchedule ?? (delivery == .onOwnExecutor)
        }
        private var countsFollowSchedule: Bool?

        /// Describes a design; the defaults describe a well-behaved synchronous one.
        public init(
            delivery: Delivery = .synchronous, allocatesPerElement: Bool = false, allocatesPerTransition: Bool = false,
            knownIssues: [KnownIssue] = []
        ) {
            self.delivery = delivery
            self.allocatesPerElement = allocatesPerElement || allocatesPerTransition
            self.allocatesPerTransition = allocatesPerTransition
            self.knownIssues = knownIssues
        }

        /// These traits with what StepBench's regression gate needs to hold a design's exact
        /// counts: how far its instruction counts may drift between builds (nil: the gate's own
        /// 0.5%), and whether its counts follow the schedule (nil: what ``delivery`` implies).
        @_spi(Measurement)
        public func measured(instructionTolerance: Double? = nil, countsFollowTheSchedule: Bool? = nil) -> Traits {
            var traits = self
            traits.instructionTolerance = instructionTolerance
            traits.countsFollowSchedule = countsFollowTheSchedule
            return traits
        }

        /// The known issue of `rule`, if the design declares one.
        public func knownIssue(_ rule: SteppingRule) -> KnownIssue? {
            knownIssues.first { $0.rule == rule }
        }
    }
}
