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

    @Test(
        "the kit fails the known-bad design on its rule, saying what it expected and saw",
        arguments: Conformance.share(KnownBad.all, offset: 2))  // not with test_keepsOrDeclaresTheOthers' heavy cases
    func test_failsItsRule(bad: KnownBad) {
        let result = Conformance.run(bad.rule, on: bad.design, configuration: Self.configuration)
        #expect(result.verdict == .failed, "\(result)")
        #expect(result.description.contains("\(bad.design.name) \(bad.rule) "), "\(result)")
        for failure in result.failures {
            #expect(result.checks.contains(failure.check), "\(failure)")
            #expect(failure.message != "expectation failed", "a failure that does not say what it saw: \(failure)")
        }
        if let first = result.failures.first { print("\(bad.design.name) \(bad.rule): \(first)") }
        // A stochastic check of the rule states its power beside the verdict: how often one of
        // its rounds catches this design's fault, and how often a run (one per scripts/test run)
        // would miss it.
        for torture in TortureCase.allCases where torture.rule == bad.rule && torture.isStochastic {
            let power = torture.power(on: bad.design, runs: Self.powerRuns(torture))
            print("\(bad.design.name) \(bad.rule): \(result.verdict.rawValue); stochastic \(power)")
            #expect(
                power.missPerRun < 0.01,
                "\(power): a run needs \(power.roundsNeeded(missBelow: 0.01)) rounds to miss it under 1% of the time")
        }
    }

    /// Runs of a stochastic case that measure its power, a few seconds: some 300 rounds of
    /// storm-64; 1,000 of cancel-after-subscribe, whose catch rate is lower and depends on what
    /// else the process runs (its fault's request goes to a Dispatch worker: where the process's
    /// other tests keep workers awake, one takes it before `cancel()` does — 2.7% of rounds in one
    /// run of the suite beside a build, where 300 rounds gave a bound too wide to pass).
    static func powerRuns(_ torture: TortureCase) -> Int {
        max(1, (torture == .cancelAfterSubscribe ? 1_000 : 300) / (torture.rounds ?? 1))
    }

    @Test(
        "the power of a stochastic check: rounds are tallied, the bound is Clopper–Pearson's, a failure names its seed")
    func test_powerArithmeticAndSeed() throws {
        let power = TorturePower(
            torture: .cancelAfterSubscribe, design: "x", runs: 3, roundsRun: 900, roundsCaught: 266)
        #expect(abs(power.catchRateLowerBound - 0.270_505) < 1e-5)  // scipy: beta.ppf(0.05, 266, 635)
        #expect(
            abs(
                TorturePower(torture: .storm64, design: "x", runs: 3, roundsRun: 30, roundsCaught: 25)
                    .catchRateLowerBound - 0.681_029) < 1e-5)
        let all = TorturePower(torture: .storm64, design: "x", runs: 3, roundsRun: 30, roundsCaught: 30)
        #expect(abs(all.catchRateLowerBound - pow(0.05, 1.0 / 30)) < 1e-12)
        #expect(TorturePower(torture: .storm64, design: "x", runs: 1, roundsRun: 10, roundsCaught: 0).missPerRun == 1)
        // 27.05% a round: 15 rounds miss 0.9%, 14 rounds 1.2%
        #expect(power.roundsNeeded(missBelow: 0.01) == 15)
        #expect(power.description.contains("caught 266 of 900 rounds in 3 runs (29.6%, ≥ 27.1% at 95% confidence)"))

        // A stochastic case's failure begins with the round, and the seed where the case draws from one.
        // Each run catches its fault with a probability (the power above), lower on a loaded
        // machine: the message is checked on the first of up to five runs that catches it.
        func caught(_ run: () -> [String]) -> [String] {
            for _ in 0..<5 {
                let failures = run()
                if !failures.isEmpty { return failures }
            }
            return []
        }
        let c4 = try #require(KnownBad.all.first { $0.rule == .c4 })
        let storm = caught { TortureCase.storm64.run(c4.design, TortureProgress(label: "replay", seed: 12_345)) }
        let first = try #require(storm.first)
        #expect(first.hasPrefix("caught in round ") && first.contains("of 10 with seed 12345"), "\(storm)")
        #expect(first.contains("storm-64 \(c4.design.name) SECONDS 12345"), "\(first)")
        let c7 = try #require(KnownBad.all.first { $0.rule == .c7 })
        let cancel = caught {
            TortureCase.cancelAfterSubscribe.run(c7.design, TortureProgress(label: "replay", seed: 12_345))
        }
        let line = try #require(cancel.first)
        #expect(
            line.hasPrefix("caught in round ")
                && line.contains("of \(TortureCase.cancelAfterSubscribe.rounds!) (each round's schedule is its number"),
            "\(line)")
        #expect(!line.contains("seed"), "\(line)")
    }

    @Test("its other rules pass, or are declared (and then shown)", arguments: Conformance.share(KnownBad.all))
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
