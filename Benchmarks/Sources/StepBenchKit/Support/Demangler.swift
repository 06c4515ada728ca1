import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance

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
