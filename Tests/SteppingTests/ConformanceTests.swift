@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import SteppingConformanceTesting
import TestSupport
import Testing

/// docs/CONFORMANCE.md's rules on the six designs, through the conformance kit: every rule a
/// test case named by its id, each design's declared known issues recorded as known issues. The
/// torture cases run in child processes (``TortureTests/childRunner``).
@Suite("Conformance: every rule of the kit on every design")
struct ConformanceTests {
    @Test("rule", arguments: Conformance.share(pairs(Conformance.rules, testedDesigns)))
    func test_rule(rule: SteppingRule, design: SteppingDesign) {
        expectConformance(
            rule, of: design,
            configuration: Conformance.Configuration(
                s5Elements: TestSwitches.s5Elements, runTorture: TortureTests.childRunner))
    }

    /// The relay in front of a design that subscribes itself adds no rule break of its own.
    @Test(
        "rule, behind the relay",
        arguments: Conformance.share(pairs(Conformance.rules, SteppingDesign.relayedDesigns)))
    func test_rule_relayed(rule: SteppingRule, design: SteppingDesign) {
        test_rule(rule: rule, design: design)
    }

    /// Every rule with every design, as the cases of one test: a list, so that
    /// ``Conformance/share(_:)`` can split it across processes.
    static func pairs(_ rules: [SteppingRule], _ designs: [SteppingDesign]) -> [(SteppingRule, SteppingDesign)] {
        rules.flatMap { rule in designs.map { (rule, $0) } }
    }

    @Test("the kit checks every rule but R2, which is measured")
    func test_kit_coversEveryRule() {
        #expect(Conformance.rules == SteppingRule.allCases.filter { $0 != .r2 })
        #expect(Set(Conformance.checks.map(\.name)).count == Conformance.checks.count, "check names are unique")
    }
}
