import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance
import Synchronization

/// Readable function names for profiles.
enum Demangler {
    /// A Swift symbol demangled (simplified) with the toolchain's `swift-demangle`; any name cut
    /// to 120 characters.
    static func readable(_ symbol: String) -> String {
        var text = symbol
        if symbol.hasPrefix("$s"),
            let out = try? ChildLaunch.command("swift-demangle", ["--simplified", symbol]).run(timeLimit: 60),
            out.status == 0
        {
            text = out.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
            if let range = text.range(of: "---> ") { text = String(text[range.upperBound...]) }
        }
        return text.count > 120 ? String(text.prefix(117)) + "..." : text
    }
}

extension Demangler {
    /// What ``keys(_:)`` has found, for the process's life.
    private static let known = Mutex<[String: String]>([:])

    /// Each symbol's stable key: demangled (simplified) through one `swift-demangle` for all of
    /// them, then ``key(_:)``. A symbol that is not Swift's keeps its name.
    static func keys(_ symbols: Set<String>) -> [String: String] {
        var answer = known.withLock { known in symbols.reduce(into: [String: String]()) { $0[$1] = known[$1] } }
        let missing = symbols.filter { answer[$0] == nil }.sorted()
        let mangled = missing.filter { $0.hasPrefix("$s") }
        var demangled: [String: String] = [:]
        if !mangled.isEmpty,
            let out = try? ChildLaunch.command("swift-demangle", ["--simplified", "--compact"]).run(
                input: Data((mangled.joined(separator: "\n") + "\n").utf8), timeLimit: 120),
            out.status == 0
        {
            let lines = out.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.count >= mangled.count {
                for (symbol, line) in zip(mangled, lines) { demangled[symbol] = String(line) }
            }
        }
        for symbol in missing { answer[symbol] = key(demangled[symbol] ?? symbol) }
        known.withLock { known in known.merge(answer) { old, _ in old } }
        return answer
    }

    /// The key of code without a symbol (callgrind names it by its address).
    static let unnamed = "(code without a symbol)"

    /// A demangled name reduced to what survives a rebuild: `specialized`, `merged` and
    /// partial-apply prefixes dropped, closure numbers folded (`closure #2 in f` → `closure in f`),
    /// callgrind's cycle mark dropped (`swift_release'2` → `swift_release`), an address
    /// (`0x00000000004d34d0`, code without a symbol) → ``unnamed``. Applied to a key, it returns
    /// the key.
    static func key(_ readable: String) -> String {
        var text = readable
        let prefixes = [
            "specialized ", "merged ", "partial apply for ", "partial apply forwarder for ",
        ]
        var changed = true
        while changed {
            changed = false
            for prefix in prefixes where text.hasPrefix(prefix) {
                text.removeFirst(prefix.count)
                changed = true
            }
        }
        text = text.replacingOccurrences(of: #"closure #[0-9]+"#, with: "closure", options: .regularExpression)
        // callgrind's mark of a function seen again inside a call cycle: `swift_release'2`
        text = text.replacingOccurrences(of: #"'[0-9]+$"#, with: "", options: .regularExpression)
        // code callgrind found no symbol for is named by its address, which moves with any
        // change of layout: one key for all of it
        if text.range(of: #"^0x[0-9a-fA-F]+$"#, options: .regularExpression) != nil { return unnamed }
        return text
    }
}
