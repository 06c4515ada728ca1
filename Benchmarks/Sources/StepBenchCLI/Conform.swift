import ArgumentParser
import Foundation
import StepBenchKit
@_spi(Measurement) import Stepping
import SteppingConformance

extension StepBench {
    struct Conform: ParsableCommand, DocumentsExitStatuses {
        static let exitStatuses: KeyValuePairs<ExitStatus, String> = [
            .slower: "a design does not conform (breaks a rule it does not declare broken)"
        ]
        static let configuration = CommandConfiguration(
            abstract: "Run the conformance kit: every rule on every design, as a rule × design table.",
            discussion: """
                Each cell: ok (every check passed), ok* (every check passed; the design declares the rule \
                broken at times), known (the design declares the rule broken and a check shows it), FAIL \
                (a check failed), STALE (a declared known issue no check shows). \
                The failures follow the table. A design conforms when it keeps each rule or breaks it \
                as declared. Each rule runs on each design in a child \
                process of this executable (and each torture case in a child of that), so that a design \
                that crashes a check costs that cell (the crash, naming the check, is the failure), not \
                the run; a check that stalls is abandoned after --stall-limit seconds. \
                \(ExitStatus.sentence(exitStatuses))
                """)

        @OptionGroup var designs: DesignOption
        var design: [SteppingDesign] { designs.design }

        @Option(help: "Comma-separated rule ids (default: every rule the kit checks).", transform: CommaSeparated.rules)
        var rule: [SteppingRule] = Conformance.rules

        @Option(help: "Seconds before a check counts as stalled.")
        var stallLimit: Double = Conformance.Configuration().stallLimit

        @Option(help: "text, markdown, or json (each rule × design cell with its verdict, checks and failures).")
        var format: ConformFormat = .text

        @Option(help: "Also write the table to this file (atomically: a temporary file, then rename).")
        var output: String?

        @Option(
            help:
                "Run nothing: draw the table in --format from this verdict (a file `conform --format json` wrote; a folder: its conformance.json)."
        )
        var from: String?

        /// This process's executable: the torture children run it (``TortureChild``).
        static var executable: URL { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath() }

        func validate() throws {
            guard stallLimit > 0 else { throw ValidationError("--stall-limit must be positive, e.g. 120") }
            if let measured = rule.first(where: { !Conformance.rules.contains($0) }) {
                throw ValidationError(
                    "\(measured) is measured, not checked (stepbench run counts allocations); rules the kit checks: \(Conformance.rules.map(\.rawValue).joined(separator: ","))"
                )
            }
        }

        func run() throws {
            let verdict = try from.map { try Inputs.conformanceVerdict($0).marked() } ?? runKit()
            let table = format == .json ? try verdict.json() : ConformanceTable(verdict).render(format)
            print(table)
            if let output {
                try ResultsFile.writeAtomically(Data(table.utf8), to: URL(fileURLWithPath: output))
                printError("conform: table written to \(output)\n")
            }
            if !verdict.conforms { throw ExitStatus.slower.code }
        }

        /// Every rule on every design, each in a child process.
        func runKit() -> ConformanceVerdict {
            var results: [[RuleResult]] = []
            for r in rule {
                printError("conform: \(r) (\(r.summary))\n")
                results.append(
                    design.map {
                        Conformance.runInChild(
                            r, on: $0, executable: Self.executable, arguments: ["conform-rule"],
                            tortureArguments: ["torture"], stallLimit: stallLimit)
                    })
            }
            return ConformanceVerdict(designs: design.map(\.name), results: results).marked()
        }
    }
}

/// One rule on one design for `conform`, in a child process: `conform-rule RULE DESIGN STALL-LIMIT
/// TORTURE-ARGUMENTS…` (hidden; ``Conformance/ruleChildMain(_:executable:)``).
struct ConformRuleChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conform-rule", abstract: "A rule's checks in a child process of stepbench conform.",
        shouldDisplay: false)

    @Argument var arguments: [String] = []

    func run() throws { Conformance.ruleChildMain(arguments, executable: StepBench.Conform.executable) }
}

/// A torture case of `conform` in a child process: `torture CASE DESIGN SECONDS` (hidden).
struct TortureChild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "torture", abstract: "A torture case in a child process of stepbench conform.",
        shouldDisplay: false)

    @Argument var arguments: [String] = []

    func run() throws { TortureCase.childMain(arguments) }
}

/// `stepbench conform --format`.
enum ConformFormat: String, CaseIterable, ExpressibleByArgument {
    case text, markdown, json
}

/// The verdict made from the conformance kit's results (its data type is the kit's, read
/// through ``Inputs``), and its words for the table.
extension ConformanceVerdict {
    init(designs: [String], results: [[RuleResult]]) {
        let checks = Dictionary(uniqueKeysWithValues: Conformance.checks.map { ($0.name, $0) })
        let rules = results.map { row in
            Rule(
                id: row[0].rule.rawValue, summary: row[0].rule.summary,
                cells: row.map { result in
                    Cell(
                        design: result.design, verdict: result.verdict.rawValue,
                        kind: result.knownIssue == nil ? "required" : "known issue", conforms: result.conforms,
                        knownIssue: result.knownIssue.map {
                            KnownIssue(reason: $0.reason, isIntermittent: $0.isIntermittent, isFatal: $0.isFatal)
                        },
                        checks: result.checks.map { name in
                            let check = checks[name]
                            return Check(
                                name: name, torture: check?.isTorture ?? false,
                                kind: check?.isStochastic == true ? "stochastic" : "required",
                                rounds: check?.torture?.rounds)
                        },
                        failures: result.failures.map {
                            Failure(check: $0.check, message: $0.message, file: $0.fileID, line: $0.line)
                        })
                })
        }
        let measured = SteppingRule.allCases.filter { !Conformance.rules.contains($0) }.map {
            Measured(
                id: $0.rawValue, summary: $0.summary,
                held:
                    "measured, not checked: stepbench run counts its allocations per element and the regression gate holds them (docs/CONFORMANCE.md)"
            )
        }
        self.init(
            designs: designs, conforms: !results.joined().contains { !$0.conforms }, rules: rules, measured: measured)
    }

    /// Every cell with its word (``ConformanceTable/cell(_:)``).
    func marked() -> ConformanceVerdict {
        var verdict = self
        for r in verdict.rules.indices {
            for c in verdict.rules[r].cells.indices {
                verdict.rules[r].cells[c].mark = ConformanceTable.cell(verdict.rules[r].cells[c])
            }
        }
        return verdict
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}

/// The rule × design table and the failures under it, drawn from the verdict (so that a
/// committed table can be drawn again from its committed verdict: `conform --from`).
struct ConformanceTable {
    var verdict: ConformanceVerdict

    init(_ verdict: ConformanceVerdict) { self.verdict = verdict }

    /// A cell's word: ok, ok* (a rule the design declares broken at times, not shown in this
    /// run), known, FAIL, STALE.
    static func cell(_ cell: ConformanceVerdict.Cell) -> String {
        switch cell.verdict {
        case RuleResult.Verdict.passed.rawValue: cell.knownIssue == nil ? "ok" : "ok*"
        case RuleResult.Verdict.knownIssue.rawValue: "known"
        case RuleResult.Verdict.failed.rawValue: "FAIL"
        default: "STALE"  // known issue not shown
        }
    }

    /// A cell that is not "passed", as ``RuleResult/description`` says it: the verdict, the
    /// declaration and the first failures.
    static func notable(_ rule: ConformanceVerdict.Rule, _ cell: ConformanceVerdict.Cell) -> String {
        var lines = ["\(cell.design) \(rule.id) (\(rule.summary)): \(cell.verdict), \(cell.checks.count) checks"]
        if let known = cell.knownIssue { lines.append("  declared: \(known.reason)") }
        lines += cell.failures.prefix(10).map { "  \($0.check): \($0.message) (\($0.file):\($0.line))" }
        if cell.failures.count > 10 { lines.append("  … and \(cell.failures.count - 10) more") }
        return lines.joined(separator: "\n")
    }

    func render(_ format: ConformFormat) -> String {
        let header = ["rule"] + verdict.designs
        let rows = verdict.rules.map { rule in [rule.id] + rule.cells.map(Self.cell) }
        var out: String
        switch format {
        case .markdown:
            out = "| \(header.joined(separator: " | ")) |\n|\(header.map { _ in "---" }.joined(separator: "|"))|\n"
            out += rows.map { "| \($0.joined(separator: " | ")) |" }.joined(separator: "\n") + "\n"
        case .text, .json:  // json is ConformanceVerdict's
            let widths = header.indices.map { i in ([header] + rows).map { $0[i].count }.max() ?? 0 }
            func line(_ cells: [String]) -> String {
                zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
            }
            out = ([line(header)] + rows.map(line)).joined(separator: "\n") + "\n"
        }
        let notable = verdict.rules.flatMap { rule in
            rule.cells.filter { $0.verdict != RuleResult.Verdict.passed.rawValue }.map { Self.notable(rule, $0) }
        }
        if !notable.isEmpty { out += "\n" + notable.joined(separator: "\n") + "\n" }
        if verdict.rules.contains(where: { $0.cells.contains { Self.cell($0) == "ok*" } }) {
            out +=
                "\nok*: the design declares the rule broken at times (an intermittent known issue); no check showed it in this run.\n"
        }
        if let stochastic = stochastic { out += "\n" + stochastic + "\n" }
        return out
    }

    /// The stochastic checks the verdict ran, in a paragraph: a pass of one is a pass with the
    /// power its known-bad design measures (docs/CONFORMANCE.md).
    var stochastic: String? {
        var seen: [String: (rule: String, rounds: Int?)] = [:]
        var order: [String] = []
        for rule in verdict.rules {
            for check in rule.cells.flatMap(\.checks) where check.kind == "stochastic" && seen[check.name] == nil {
                seen[check.name] = (rule.id, check.rounds)
                order.append(check.name)
            }
        }
        guard !order.isEmpty else { return nil }
        let list = order.map { name in
            let (rule, rounds) = seen[name]!
            return "\(name) (\(rule)\(rounds.map { ", \($0) rounds" } ?? ""))"
        }
        return "Stochastic checks: \(list.joined(separator: ", ")). A design with the fault one looks for can pass "
            + "a run of it: it stops at the first round that catches the fault. How often a round catches a known-bad "
            + "design's, and so how often a run misses it, every scripts/test run measures and prints "
            + "(docs/CONFORMANCE.md, \"Stochastic checks\")."
    }
}
