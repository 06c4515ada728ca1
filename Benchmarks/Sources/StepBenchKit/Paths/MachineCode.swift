import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance

/// A hash of each profiled function's machine code, so that a comparison of two builds can tell
/// a function whose code changed from one whose code is the same and only moved in the binary
/// (``ResultsFile/CallProfile/Function/code``).
///
/// The code is the toolchain's `llvm-objdump` disassembly of the function's symbol, made
/// independent of where things lie: addresses of calls and jumps to other functions become the
/// callee's name, jumps inside the function its offset, a `%rip`-relative operand loses its
/// displacement (a reference into data the data's symbol when it names one exactly, nothing
/// otherwise), and the padding after the last instruction is dropped. Two builds that differ
/// only in layout hash alike; an added call, retain or instruction does not.
///
/// In the executable, only symbols with plain names are looked up: Swift's (`$s…`, as callgrind
/// names them) and C's. A shared library's functions hash by the library's build ID. Nothing
/// has a hash when `llvm-objdump` is not on the `PATH` (it ships with the Swift toolchain).
enum MachineCode {
    /// The hash of every function of `dumps` that can be looked up, by the name callgrind gives
    /// it (a cycle's `'2` copy with its function's). A function of the profiled executable
    /// hashes its own disassembly; a function of a shared library (the Swift runtime, libc)
    /// the library's build ID, as a library's code changes only with the library.
    static func hashes(of dumps: [CallgrindDump]) -> [String: String] {
        let objects = objects(of: dumps)
        var byObject: [String: Set<String>] = [:]
        for (name, inside) in objects { for object in inside { byObject[object, default: []].insert(name) } }
        let found =
            (try? parallelMap(byObject.keys.sorted().filter { FileManager.default.fileExists(atPath: $0) }) {
                object -> [String: String] in
                guard isLibrary(object) else { return hashes(of: byObject[object]!, in: object) }
                guard let identity = buildID(of: object) else { return [:] }
                return byObject[object]!.reduce(into: [:]) { $0[$1] = identity }
            }) ?? []
        // a name that ran in several objects (a module's local helper, as in the executable and
        // in a library) hashes all of its copies together; one missing leaves it without a hash
        var answer: [String: String] = [:]
        for (name, inside) in objects where inside.count == 1 {
            if let code = found.lazy.compactMap({ $0[name] }).first { answer[name] = code }
        }
        for (name, inside) in objects where inside.count > 1 {
            let codes = found.compactMap { $0[name] }
            if codes.count == inside.count, let code = MachineCode.combined(codes) { answer[name] = code }
        }
        return answer
    }

    /// The objects each function of `dumps` ran in (a cycle's copy is found by its function's
    /// name): every one, however the dumps list them.
    static func objects(of dumps: [CallgrindDump]) -> [String: Set<String>] {
        var objectsOf: [String: Set<String>] = [:]
        var names = Set<String>()
        for dump in dumps {
            names.formUnion(dump.functions.keys)
            for (object, costs) in dump.addresses {
                for (_, spent) in costs { objectsOf[uncycled(spent.function), default: []].insert(object) }
            }
        }
        return names.reduce(into: [:]) { answer, name in
            if let objects = objectsOf[uncycled(name)] { answer[name] = objects }
        }
    }

    /// A shared object's file (`libswiftCore.so`, `libc.so.6`): its functions hash by the file.
    static func isLibrary(_ object: String) -> Bool {
        let name = URL(fileURLWithPath: object).lastPathComponent
        return name.hasSuffix(".so") || name.contains(".so.")
    }

    /// The library's identity: a hash of its build ID note, or nil when it has none.
    static func buildID(of object: String) -> String? {
        guard
            let out = try? ChildLaunch.command("llvm-objdump", ["-s", "-j", ".note.gnu.build-id", object]).run(
                timeLimit: 60), out.status == 0,
            let contents = out.stdoutText.range(of: "Contents of section")
        else { return nil }
        return "lib-" + hash([String(out.stdoutText[contents.lowerBound...])])
    }

    /// The name without callgrind's cycle mark (`swift_release'2` → `swift_release`).
    static func uncycled(_ function: String) -> String {
        guard let mark = function.lastIndex(of: "'"), function.index(after: mark) < function.endIndex,
            function[function.index(after: mark)...].allSatisfy(\.isNumber)
        else { return function }
        return String(function[..<mark])
    }

    /// The symbol to disassemble for a function callgrind names `function` (its cycle mark
    /// dropped), or nil for a name that is not a plain symbol (a demangled C++ name, an
    /// address).
    static func symbol(of function: String) -> String? {
        let name = uncycled(function)
        let plain = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_$.@"))
        guard !name.isEmpty, !name.hasPrefix("0x"),
            name.unicodeScalars.allSatisfy({ $0.isASCII && plain.contains($0) })
        else { return nil }
        return name
    }

    /// The hashes of `functions` in `object`, by function; functions not found are left out.
    static func hashes(of functions: Set<String>, in object: String) -> [String: String] {
        var bySymbol: [String: [String]] = [:]
        for function in functions { if let s = symbol(of: function) { bySymbol[s, default: []].append(function) } }
        guard !bySymbol.isEmpty,
            let out = try? ChildLaunch.command(
                "llvm-objdump",
                [
                    "-d", "--no-show-raw-insn", "--no-leading-addr",
                    "--disassemble-symbols=" + bySymbol.keys.sorted().joined(separator: ","), object,
                ]
            ).run(timeLimit: 300), out.status == 0, !out.timedOut
        else { return [:] }
        // a local symbol may name several functions (`__swift_instantiateConcreteTypeFromMangledName`,
        // one per module): their hashes together
        var blocks: [String: [String]] = [:]
        for (symbol, lines) in functionsOf(disassembly: out.stdoutText) {
            blocks[symbol, default: []].append(hash(normalised(lines, symbol: symbol)))
        }
        var answer: [String: String] = [:]
        for (symbol, hashes) in blocks {
            for function in bySymbol[symbol] ?? [] { answer[function] = combined(hashes) }
        }
        return answer
    }

    /// The disassembly's functions: each symbol's instruction lines (llvm-objdump's
    /// `<symbol>:` header, then its lines up to a blank one).
    static func functionsOf(disassembly: String) -> [(symbol: String, lines: [Substring])] {
        var found: [(symbol: String, lines: [Substring])] = []
        for line in disassembly.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("<") && line.hasSuffix(">:") {
                found.append((String(line.dropFirst().dropLast(2)), []))
            } else if !found.isEmpty, line.hasPrefix(" ") || line.hasPrefix("\t"),
                !line.trimmingCharacters(in: .whitespaces).isEmpty
            {
                found[found.count - 1].lines.append(line)
            }
        }
        return found
    }

    /// The function's instructions, one per line, with what depends on layout taken out (see
    /// ``MachineCode``).
    static func normalised(_ lines: [Substring], symbol: String) -> [String] {
        var instructions = lines.map { line -> String in
            var text = line.trimmingCharacters(in: .whitespaces)
            var comment = ""
            if let hash = text.range(of: "#") {
                comment = String(text[hash.upperBound...])
                text = String(text[..<hash.lowerBound])
            }
            text = replacing(targets, in: text) { Self.target(name: $0, within: symbol) }
            text = ripRelative.stringByReplacingMatches(
                in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "(%rip)")
            // a %rip-relative reference: the data's symbol when the comment names it exactly
            if let named = firstMatch(exactSymbol, in: comment) { text += " # <\(named)>" }
            return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        while let last = instructions.last, isPadding(last) { instructions.removeLast() }
        return instructions
    }

    /// "0x4a1f2 <name+0x3b>", a call's or jump's target as llvm-objdump prints it.
    private static let targets = try! NSRegularExpression(pattern: "0x[0-9a-f]+ <([^>]*)>")
    /// "-0x18(%rip)": a displacement from the instruction's own address.
    private static let ripRelative = try! NSRegularExpression(pattern: "-?0x[0-9a-f]+\\(%rip\\)")
    /// "0x7516d8 <name>" without an offset: a reference to the start of a symbol.
    private static let exactSymbol = try! NSRegularExpression(pattern: "0x[0-9a-f]+ <([^>+]*)>")

    /// A target named `name` (`symbol+0x3b`, `other`, `other+0x10`) from inside `function`: an
    /// offset in the function itself, another function by its name, a place inside another
    /// symbol (a jump table, data behind a label) by nothing, as its offset depends on layout.
    private static func target(name: String, within function: String) -> String {
        if name == function { return "<+0x0>" }
        if name.hasPrefix(function + "+") { return "<" + name.dropFirst(function.count) + ">" }
        return name.contains("+") ? "<?>" : "<\(name)>"
    }

    private static func replacing(
        _ pattern: NSRegularExpression, in text: String, with replacement: (String) -> String
    ) -> String {
        var result = "", last = text.startIndex
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let whole = Range(match.range, in: text), let name = Range(match.range(at: 1), in: text) else {
                continue
            }
            result += text[last..<whole.lowerBound] + replacement(String(text[name]))
            last = whole.upperBound
        }
        return result + text[last...]
    }

    private static func firstMatch(_ pattern: NSRegularExpression, in text: String) -> String? {
        guard let match = pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            let name = Range(match.range(at: 1), in: text)
        else { return nil }
        return String(text[name])
    }

    /// Alignment padding after a function's last instruction.
    private static func isPadding(_ instruction: String) -> Bool {
        let mnemonic = instruction.split(separator: " ").first.map(String.init) ?? ""
        return mnemonic.hasPrefix("nop") || mnemonic == "int3" || mnemonic == "data16" || mnemonic == "cs"
            || instruction == "xchg %ax, %ax"
    }

    /// 64-bit FNV-1a of the lines, as 16 hexadecimal digits.
    static func hash(_ lines: [String]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in lines.joined(separator: "\n").utf8 {
            h ^= UInt64(byte)
            h = h &* 0x100_0000_01b3
        }
        return String(h, radix: 16).leftPadded(to: 16)
    }

    /// One hash for the codes of the symbols a key folds together (a generic function's
    /// specialisations, numbered closures): nil when any of them is unknown.
    static func combined(_ codes: [String?]) -> String? {
        guard !codes.isEmpty, codes.allSatisfy({ $0 != nil }) else { return nil }
        let known = codes.compactMap { $0 }
        return known.count == 1 ? known[0] : hash(known.sorted())
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
