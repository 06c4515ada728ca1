import ArgumentParser
import StepBenchKit
import StepBenchScenarios
@_spi(Measurement) import Stepping

// The values options take. Single values are parsed by ArgumentParser, which lists the valid
// ones when a value is unknown; lists (`--design locked,atomic`) by ``CommaSeparated``.

extension ScenarioKind: ExpressibleByArgument {}
extension StepPath: ExpressibleByArgument {}
extension Preset: ExpressibleByArgument {}
extension RunPasses.Pass: ExpressibleByArgument {}
extension MeasuringProtocol: ExpressibleByArgument {}
extension ExportFormat: ExpressibleByArgument {}
extension ComparisonFormat: ExpressibleByArgument {}

/// `stepbench list --format`.
enum ListFormat: String, CaseIterable, ExpressibleByArgument {
    case text, json
}

/// Comma-separated lists: `--design locked,atomic`, `--threads 1,2,4`. ArgumentParser puts the
/// flag and the given text before these messages.
enum CommaSeparated {
    /// Names of `Element` values; the message of an unknown one lists the valid ones.
    static func names<Element: ExpressibleByArgument>(_ text: String, noun: String) throws -> [Element] {
        try names(text, noun: noun, valid: Element.allValueStrings, Element.init(argument:))
    }

    /// Names of values that `value(named:)` finds among `valid` (types of the library, which
    /// knows nothing of ArgumentParser).
    static func names<Element>(_ text: String, noun: String, valid: [String], _ value: (String) -> Element?) throws
        -> [Element]
    {
        let valid = "valid \(noun)s: \(valid.joined(separator: ", "))"
        let names = items(text).filter { !$0.isEmpty }
        guard !names.isEmpty else { throw ValidationError("no \(noun) given; \(valid)") }
        return try names.map { name in
            guard let element = value(name) else {
                throw ValidationError("unknown \(noun) '\(name)'; \(valid)")
            }
            return element
        }
    }

    static func designs(_ text: String) throws -> [SteppingDesign] {
        try names(text, noun: "design", valid: SteppingDesign.described.map(\.name), SteppingDesign.init(rawValue:))
    }
    static func scenarios(_ text: String) throws -> [ScenarioKind] { try names(text, noun: "scenario") }
    static func rules(_ text: String) throws -> [SteppingRule] {
        try names(text, noun: "rule", valid: SteppingRule.allCases.map(\.rawValue), SteppingRule.init(rawValue:))
    }
    /// Paths, or `none` for no path.
    static func paths(_ text: String) throws -> [StepPath] {
        text.trimmingCharacters(in: .whitespaces) == "none" ? [] : try names(text, noun: "path")
    }

    /// Thread counts, 1…256.
    static func threads(_ text: String) throws -> [Int] {
        let parts = items(text)
        guard !parts.isEmpty else { throw ValidationError("needs a list such as 1,2,4") }
        return try parts.map { part in
            guard let n = Int(part), n > 0, n <= 256 else {
                throw ValidationError("'\(part)' is not a thread count (1…256); write e.g. 1,2,4")
            }
            return n
        }
    }

    /// The text's comma-separated items, trimmed.
    private static func items(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// `values` as one argument again (for a child process).
    static func joined<Value: RawRepresentable<String>>(_ values: [Value]) -> String {
        values.map(\.rawValue).joined(separator: ",")
    }
}
