import Foundation
import Stepping
import SteppingConformanceTesting
import Testing

/// The kit proves each check can fail. For every rule it checks, a known-bad design (one
/// plausible mistake, ``Fault``, on public API only) must fail that rule, with messages that name
/// the rule and the check and say what was expected and what was seen; the rules the mistake
/// leaves alone must pass, and those it drags along are declared (a declaration the kit does
/// not show fails as "known issue not shown", so the lists below are checked too).
@Suite("Known-bad designs: the kit fails each on its rule")
struct KnownBadDesignTests {
    /// Short limits: a known-bad design may deadlock, and its verdict is wanted quickly.
    static let configuration = Conformance.Configuration(s5Elements: 100_000, stallLimit: 6, knownIssueStallLimit: 4)

    @Test("every rule the kit checks has a known-bad design")
    func test_everyRuleHasOne() {
        #expect(Set(KnownBad.all.map(\.rule)) == Set(Conformance.rules))
        #expect(Set(KnownBad.all.map(\.fault)) == Set(Fault.allCases))
    }

    @Test("the kit fails the known-bad design on its rule, saying what it expected and saw", arguments: KnownBad.all)
    func test_failsItsRule(bad: KnownBad) {
        let result = Conformance.run(bad.rule, on: bad.design, configuration: Self.configuration)
        #expect(result.verdict == .failed, "\(result)")
        #expect(result.description.contains("\(bad.design.name) \(bad.rule) "), "\(result)")
        for failure in result.failures {
            #expect(result.checks.contains(failure.check), "\(failure)")
            #expect(failure.message != "expectation failed", "a failure that does not say what it saw: \(failure)")
        }
        if let first = result.failures.first { print("\(bad.design.name) \(bad.rule): \(first)") }
    }

    @Test("its other rules pass, or are declared (and then shown)", arguments: KnownBad.all)
    func test_keepsOrDeclaresTheOthers(bad: KnownBad) {
        for rule in Conformance.rules where rule != bad.rule && bad.notRun[rule] == nil {
            let result = Conformance.run(rule, on: bad.design, configuration: Self.configuration)
            #expect(result.conforms, "\(result)")
        }
    }
}

/// A known-bad design: the rule its fault breaks, and what else that fault breaks (declared in
/// its traits, so the kit reports those rules as known issues and checks they still show).
struct KnownBad: Sendable, CustomTestStringConvertible {
    let fault: Fault
    let rule: SteppingRule
    let design: SteppingDesign
    /// Rules not run on it, with why: their checks would end the test process.
    let notRun: [SteppingRule: String]

    var testDescription: String { "\(rule): \(fault.rawValue)" }

    init(
        _ rule: SteppingRule, _ fault: Fault, alsoBreaks: [SteppingRule: String] = [:],
        sometimesBreaks: [SteppingRule: String] = [:], notRun: [SteppingRule: String] = [:]
    ) {
        self.fault = fault
        self.rule = rule
        self.notRun = notRun
        let issues =
            alsoBreaks.map { SteppingDesign.Traits.KnownIssue($0.key, $0.value) }
            + sometimesBreaks.map { SteppingDesign.Traits.KnownIssue($0.key, $0.value, isIntermittent: true) }
        design = SteppingDesign(
            name: "bad-\(fault.rawValue)",
            traits: .init(knownIssues: issues.sorted { order($0.rule) < order($1.rule) }),
            factory: FaultyFactory(fault: fault))
    }

    /// Names of the racing checks, for the reasons below.
    static let storm = "under storm-64's racing promises"

    static let all: [KnownBad] = [
        KnownBad(
            .d1, .d1RequestsTwiceOnSubscription,
            alsoBreaks: [
                .d2: "two inputs outstanding from the start",
                .d3: "upstream's calls hold the extra request",
                .d4: "upstream's calls hold the extra request",
                .s1: "the second input arrives while the first promise is open, and is dropped",
                .s2: "upstream's calls hold the extra request",
                .s4: "upstream's calls hold the extra request",
                .s5: "the second input is dropped, so the stream stalls",
                .c3: "upstream's calls hold the extra request",
                .c4: "upstream's calls hold the extra request",
                .c5: "upstream's calls hold the extra request",
                .c6: "upstream's calls hold the extra request",
                .r1: "upstream's calls hold the extra request",
                .r4: "upstream's calls hold the extra request",
            ]),
        KnownBad(
            .d2, .d2ReturnsDemandForEveryInput,
            alsoBreaks: [
                .d4: "a later .more asks for a second input",
                .s1: "the second input arrives while the promise is open, and is dropped",
                .s4: "demand returned before the promise said .more",
            ],
            sometimesBreaks: [.s5: "the second input is dropped", .c4: storm, .r4: "a slow request's input is dropped"]),
        KnownBad(.d3, .d3RequestsSynchronousMore),
        KnownBad(.d4, .d4RequestsOnAWorker),
        KnownBad(
            .d5, .d5ForwardsNoneDemand,
            alsoBreaks: [
                .s2: "a repeated .more reaches upstream, as request(.none)",
                .s3: "a stale .more said twice reaches upstream, as request(.none)",
                .c4: "a repeated .more after cancel() reaches upstream, as request(.none)",
            ]),
        KnownBad(.s1, .s1NeverDrops),
        KnownBad(
            .s2, .s2RepeatedMoreActs,
            alsoBreaks: [
                .d2: "the repeated .more asks for a second input", .s3: "a repeated .more acts after the next input",
            ],
            sometimesBreaks: [.s1: "a second input arrives while the promise is open", .c4: storm]),
        KnownBad(
            .s3, .s3StalePromiseActs,
            sometimesBreaks: [.s1: "a stale .more asks for an input while one is outstanding", .c4: storm]),
        KnownBad(
            .s4, .s4CancelPromiseKeepsStepping,
            alsoBreaks: [
                .s2: "promise(.cancel) repeated cancels upstream again",
                .s3: "a stale promise(.cancel) cancels upstream",
                .c2: "promise(.cancel) during the completion cancels upstream",
                .c6: "promise(.cancel) after a re-entrant completion cancels upstream",
                .r1: "the machine never dies: the stepper is kept",
                .r3: "the stepper is never released, so its deinit never calls back",
            ],
            sometimesBreaks: [.c4: storm]),
        KnownBad(
            .s5, .s5RequestsUnderLock,
            alsoBreaks: [
                .d2: "the counting upstream sends from inside a later request: deadlock",
                .d4: "the buffer sends from inside a later request: deadlock",
                .s1: "the counting upstream sends from inside a later request: deadlock",
                .c4: "an upstream that sends from inside a later request deadlocks",
            ]),
        KnownBad(.c1, .c1FailureAsFinished),
        KnownBad(.c2, .c2CompletionBeforeDeath),
        KnownBad(.c3, .c3SecondSubscriptionDropped),
        KnownBad(
            .c4, .c4CancelNotIdempotent, alsoBreaks: [.c2: "a cancel() inside the completion cancels upstream"]),
        KnownBad(.c5, .c5DemandForIgnoredInput),
        KnownBad(.c6, .c6DropsReentrantCompletion),
        KnownBad(.c7, .c7FirstRequestOnAWorker),
        KnownBad(
            .r1, .r1KeepsStepper, alsoBreaks: [.r3: "the stepper is never released, so its deinit never calls back"]),
        KnownBad(.r3, .r3ReleasesUnderLock),
        KnownBad(.r4, .r4RequestUnderLock),
    ]
}

/// A rule's place in the rules' order.
func order(_ rule: SteppingRule) -> Int { SteppingRule.allCases.firstIndex(of: rule)! }
