import Foundation
import StepBenchScenarios

/// The answer to one question a run is read for: which design to choose for a load. The
/// questions are the tool's (``Question/questions(of:)``), each a scenario at a thread count,
/// the metric that decides it and the field of designs it is asked over; the answer is drawn
/// from the run's ``Ranking`` of that question, round by round:
///
/// - **winner**: the first by median is separated from every other design (each pair's 95%
///   interval of the ratio lies above 1);
/// - **equivalent**: every other design is separated from the first or equivalent to it within
///   ±``Ranking/equivalenceMargin`` (the pair's interval lies inside the margin), and at least one
///   is equivalent: the leaders are the first and its equivalents, a decided tie;
/// - **open**: some pair is neither: more rounds are needed (``Deciding`` adds them where the
///   run has a budget); `detectable` says the smallest ratio the rounds could have told apart;
/// - **alone**: one design measured the question; nothing to compare.
///
/// The README's figures, the docs and the report draw these and decide nothing themselves.
public struct Verdict: Encodable, Equatable, Sendable {
    /// A question: a scenario at a thread count, decided on `metric` over `field`.
    public struct Question: Hashable, Encodable, Sendable, CustomStringConvertible {
        /// What the question asks, from the scenario's roles (``ScenarioDeclaration/Role``).
        public enum Role: String, Encodable, Sendable {
            /// The pure cost per element, one thread.
            case perElement
            /// A promise fulfilled on another thread: `.more` to the next input.
            case crossThread
            /// Several threads calling in at once.
            case contended
            /// The designs that deliver on their own executor, with hand-offs that park.
            case asynchronous
            /// `cancel()` racing the inputs: cancel to upstream cancelled.
            case cancel
        }

        public var role: Role
        public var scenario: ScenarioKind
        public var threads: Int
        public var metric: Metric
        public var field: Ranking.Field

        /// "sync-step ×1 ns_per_element".
        public var description: String { "\(scenario.rawValue) ×\(threads) \(metric.rawValue)" }

        /// The questions `file` can answer, in the order a report asks them: the per-element
        /// scenario at one thread (time per element); the cross-thread scenario (p50 latency);
        /// each contended scenario (time per element); the asynchronous verdict scenario over
        /// the asynchronous designs (p50); the cancel scenario (p50). Each multi-thread question
        /// is asked at the most threads the file measured without oversubscribing the machine
        /// (an oversubscribed row is shown, never decided).
        public static func questions(of file: ResultsFile) -> [Question] {
            let cores = file.machine.cores
            func threads(_ scenario: ScenarioKind) -> Int? {
                file.rows.filter { $0.scenario == scenario && $0.status == .ok && (cores <= 0 || $0.threads <= cores) }
                    .map(\.threads).max()
            }
            var result: [Question] = []
            func ask(_ role: Role, _ scenario: ScenarioKind?, _ metric: Metric, _ field: Ranking.Field = .all) {
                guard let scenario, let t = role == .perElement ? 1 : threads(scenario),
                    file.rows.contains(where: { $0.scenario == scenario && $0.threads == t && $0.status == .ok })
                else { return }
                result.append(Question(role: role, scenario: scenario, threads: t, metric: metric, field: field))
            }
            ask(.perElement, ScenarioKind.with(.perElement).first, .nsPerElement)
            ask(.crossThread, ScenarioKind.with(.crossThread).first, .latencyP50)
            for scenario in ScenarioKind.with(.contended) { ask(.contended, scenario, .nsPerElement) }
            ask(.asynchronous, ScenarioKind.with(.asynchronousVerdict).first, .latencyP50, .asynchronous)
            ask(.cancel, ScenarioKind.with(.cancel).first, .latencyP50)
            return result
        }
    }

    public enum Outcome: String, Encodable, Sendable {
        case winner, equivalent, open, alone
        /// The first's time lies below its own floor's and nothing measured explains it
        /// (``BelowFloor``: no design can beat the same work without a stepping subscriber), so it
        /// is not named; more rounds do not change that.
        case belowFloor

        /// Whether the question is answered.
        public var isDecided: Bool { self != .open && self != .belowFloor }
    }

    /// An exact count of a design in the question's scenario (callgrind; the profile's).
    public struct ExactCount: Encodable, Equatable, Sendable {
        public var design: Subject
        public var instructionsPerElement: Double
    }

    public var question: Question
    public var outcome: Outcome
    /// The lowest median.
    public var first: Subject
    /// The winner alone, or the first and its equivalents; empty while open.
    public var leaders: [Subject]
    /// The designs neither separated from the first nor equivalent to it.
    public var open: [Subject]
    /// The margin of an equivalence (``Ranking/equivalenceMargin``).
    public var margin: Double
    /// The rounds the first was measured in.
    public var rounds: Int
    /// Open only: the smallest ratio (slower over faster) the open pairs' rounds could have told
    /// apart, the widest of their intervals' upper ends over their centre.
    public var detectable: Double?
    /// Per-element questions, when a profile is at hand: each ranked design's exact
    /// instructions per element, in the ranking's order.
    public var exact: [ExactCount]?
    /// The run was made while other processes kept the machine busy (``Quietness``): the
    /// verdict may be the load's.
    public var disturbed: Bool?

    /// One line: "sync-step ×1 ns_per_element: winner atomic (12 rounds)".
    public var summary: String {
        let names = { (s: [Subject]) in s.map(\.name).joined(separator: ", ") }
        let said: String
        switch outcome {
        case .winner: said = "winner \(first)"
        case .alone: said = "\(first) alone"
        case .belowFloor: said = "not decided: \(first)'s time lies below its own floor's, unexplained"
        case .equivalent: said = "\(names(leaders)) equivalent within ±\(Int((margin * 100).rounded()))%"
        case .open:
            said =
                "open, by median \(first); not decided against \(names(open))"
                + (detectable.map { String(format: " (could tell %.2f× apart)", $0) } ?? "")
        }
        return "\(question): \(said) (\(rounds) rounds)\(disturbed == true ? ", measured on a busy machine" : "")"
    }

    private enum CodingKeys: String, CodingKey {
        case role, scenario, threads, metric, field, outcome, decided, first, leaders, open, margin, rounds,
            detectable, exact, disturbed
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(question.role, forKey: .role)
        try c.encode(question.scenario, forKey: .scenario)
        try c.encode(question.threads, forKey: .threads)
        try c.encode(question.metric, forKey: .metric)
        try c.encode(question.field, forKey: .field)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(outcome.isDecided, forKey: .decided)
        try c.encode(first, forKey: .first)
        try c.encode(leaders, forKey: .leaders)
        try c.encode(open, forKey: .open)
        try c.encode(margin, forKey: .margin)
        try c.encode(rounds, forKey: .rounds)
        try c.encodeIfPresent(detectable, forKey: .detectable)
        try c.encodeIfPresent(exact, forKey: .exact)
        try c.encodeIfPresent(disturbed, forKey: .disturbed)
    }

    /// The verdict of `question` from `ranking` (nil: no ranking, i.e. fewer than two designs;
    /// `alone` is given by ``decide(_:rankings:profiles:)``).
    public init(_ question: Question, ranking: Ranking) {
        self.question = question
        let first = ranking.standings[0].design
        self.first = first
        rounds = ranking.standings[0].repetitions
        margin = Ranking.equivalenceMargin
        var equivalents: [Subject] = [], open: [Subject] = [], widest: Double? = nil
        // The first has the lowest median, so it is the faster of each of its pairs.
        for pair in ranking.pairs where pair.faster == first && !pair.separated {
            if pair.equivalent {
                equivalents.append(pair.slower)
                continue
            }
            open.append(pair.slower)
            if let ratio = pair.ratio, let high = pair.ciHigh { widest = max(widest ?? 0, high / ratio) }
        }
        self.open = open
        detectable = open.isEmpty ? nil : widest
        if !open.isEmpty {
            outcome = .open
            leaders = []
        } else if equivalents.isEmpty {
            outcome = .winner
            leaders = [first]
        } else {
            outcome = .equivalent
            leaders = [first] + equivalents
        }
    }

    init(alone question: Question, design: Subject, rounds: Int) {
        self.question = question
        outcome = .alone
        first = design
        leaders = [design]
        open = []
        margin = Ranking.equivalenceMargin
        self.rounds = rounds
    }

    /// Every question of `file` (``Question/questions(of:)``) answered from `rankings` (the
    /// file's own, ``Ranking/rank(_:)``, by default); `profiles` (the file's, or a profile read
    /// beside it) give the per-element question's exact counts.
    public static func decide(
        _ file: ResultsFile, rankings: [Ranking]? = nil, profiles: [ResultsFile.ProfileRow]? = nil
    ) -> [Verdict] {
        let rankings = rankings ?? Ranking.rank(file)
        let profiles = profiles ?? file.profiles ?? []
        let disturbed = file.quietness.map { $0.disturbed ? true : nil } ?? nil
        let doubts = BelowFloor.find(file).filter { !$0.decided }
        return Question.questions(of: file).compactMap { q -> Verdict? in
            var verdict: Verdict
            if let ranking = rankings.first(where: {
                $0.scenario == q.scenario && $0.threads == q.threads && $0.metric == q.metric && $0.field == q.field
            }) {
                verdict = Verdict(q, ranking: ranking)
                if q.role == .perElement {
                    let counts = ranking.standings.compactMap { s in
                        profiles.first { $0.scenario == q.scenario && $0.design == s.design }.map {
                            ExactCount(design: s.design, instructionsPerElement: $0.instructionsPerElement)
                        }
                    }
                    verdict.exact = counts.isEmpty ? nil : counts
                }
            } else {
                let rows = file.rows.filter {
                    $0.scenario == q.scenario && $0.threads == q.threads && $0.status == .ok && !$0.repetitions.isEmpty
                }
                guard rows.count == 1 else { return nil }
                verdict = Verdict(alone: q, design: rows[0].design, rounds: rows[0].repetitions.count)
            }
            if verdict.outcome.isDecided,
                doubts.contains(where: {
                    $0.key
                        == MeasureKey(RowKey(scenario: q.scenario, design: verdict.first, threads: q.threads), q.metric)
                })
            {
                verdict.outcome = .belowFloor
                verdict.leaders = []
            }
            verdict.disturbed = disturbed
            return verdict
        }
    }
}
