import Foundation

/// `stepbench conform --format json`: the verdict as data, for CI and the report (schema
/// `stepbench-conformance/2`). Each checked rule with its cells (one per design: the verdict, its
/// kind, the checks run, the failures); the rules the kit does not check (R2: measured by
/// `stepbench run`, held by the gate) listed with how they are held instead of being absent.
/// The command line makes it from the conformance kit's results and draws its table; it is read
/// through ``Inputs``.
public struct ConformanceVerdict: Codable, Sendable {
    public struct Rule: Codable, Sendable {
        public var id: String
        public var summary: String
        public var cells: [Cell]

        public init(id: String, summary: String, cells: [Cell]) {
            self.id = id
            self.summary = summary
            self.cells = cells
        }
    }
    public struct Cell: Codable, Sendable {
        public var design: String
        /// "passed", "known issue", "failed", "known issue not shown".
        public var verdict: String
        /// "required" (the design must keep the rule) or "known issue" (it declares the rule broken).
        public var kind: String
        public var conforms: Bool
        public var knownIssue: KnownIssue?
        public var checks: [Check]
        public var failures: [Failure]
        /// The cell's word in the table (ok, ok*, known, FAIL, STALE; the command line's
        /// `ConformanceTable.cell`), for the report to draw; written with every verdict, filled in
        /// when one is read.
        public var mark: String?

        public init(
            design: String, verdict: String, kind: String, conforms: Bool, knownIssue: KnownIssue?,
            checks: [Check], failures: [Failure], mark: String? = nil
        ) {
            self.design = design
            self.verdict = verdict
            self.kind = kind
            self.conforms = conforms
            self.knownIssue = knownIssue
            self.checks = checks
            self.failures = failures
            self.mark = mark
        }
    }
    public struct KnownIssue: Codable, Sendable {
        public var reason: String
        public var isIntermittent: Bool
        public var isFatal: Bool

        public init(reason: String, isIntermittent: Bool, isFatal: Bool) {
            self.reason = reason
            self.isIntermittent = isIntermittent
            self.isFatal = isFatal
        }
    }
    public struct Check: Codable, Sendable {
        public var name: String
        /// A torture case (run in a child process of the rule's).
        public var torture: Bool
        /// "required": one run shows what it checks; "stochastic": a design with the fault it
        /// looks for can pass one run (it stops at the first of its rounds that catches it).
        public var kind: String
        /// A stochastic check's rounds per run.
        public var rounds: Int?

        public init(name: String, torture: Bool, kind: String, rounds: Int?) {
            self.name = name
            self.torture = torture
            self.kind = kind
            self.rounds = rounds
        }
    }
    public struct Failure: Codable, Sendable {
        public var check: String
        public var message: String
        public var file: String
        public var line: Int

        public init(check: String, message: String, file: String, line: Int) {
            self.check = check
            self.message = message
            self.file = file
            self.line = line
        }
    }
    public struct Measured: Codable, Sendable {
        public var id: String
        public var summary: String
        public var held: String

        public init(id: String, summary: String, held: String) {
            self.id = id
            self.summary = summary
            self.held = held
        }
    }

    public static let schema = "stepbench-conformance/2"
    public var schema = Self.schema
    public var designs: [String]
    public var conforms: Bool
    public var rules: [Rule]
    public var measured: [Measured]

    public init(designs: [String], conforms: Bool, rules: [Rule], measured: [Measured]) {
        self.designs = designs
        self.conforms = conforms
        self.rules = rules
        self.measured = measured
    }

    /// A verdict `conform --format json` wrote, at `path` (as given: messages name it so).
    static func read(_ path: String) throws -> ConformanceVerdict {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ResultsError(
                .unreadable,
                "\(path): cannot read it (\(error.localizedDescription)); write one with stepbench conform --format json --output FILE"
            )
        }
        struct Schema: Decodable { var schema: String }
        let found = try? JSONDecoder().decode(Schema.self, from: data).schema
        if let found, found != Self.schema {
            throw ResultsError(
                .wrongKind,
                "\(path): not a conformance verdict of this stepbench: schema '\(found)', expected '\(Self.schema)'"
                    + (found == "stepbench-conformance/1"
                        ? " (its checks carry no kind, required or stochastic): write it again with scripts/conformance"
                        : ""))
        }
        do { return try JSONDecoder().decode(ConformanceVerdict.self, from: data) } catch {
            // of this schema but broken: malformed; no schema at all: another document
            throw ResultsError(found == nil ? .wrongKind : .malformed, "\(path): not a conformance verdict (\(error))")
        }
    }
}
