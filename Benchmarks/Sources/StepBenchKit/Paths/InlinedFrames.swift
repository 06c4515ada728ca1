import Foundation
@_spi(StepBench) import SteppingConformance

/// Which of the project's own functions, inlined into a profiled function, each of its
/// instructions came from: so that a change made in an inlined helper is charged to the helper
/// (``ResultsFile/CallProfile/Inlined``), not spread over every caller it was inlined into.
///
/// The profiled executable's debug information (DWARF, which a release build keeps) says, for
/// an address, the chain of inlined frames it lies in, innermost first; the toolchain's
/// `llvm-symbolizer --inlining` reads it. An instruction belongs to the innermost frame of the
/// project's own code (a file under a `Sources/` folder that is not a dependency's checkout),
/// with a closure standing for the function it is written in: a retain added in a helper is
/// the helper's, though the standard library's `Unmanaged` made the call; a transition closure
/// passed into that helper is its caller's. An instruction whose frame is the containing
/// function itself has no helper. Nothing is placed when `llvm-symbolizer` is missing or the
/// binary has no debug information.
enum InlinedFrames {
    /// Where an address lies: the helper whose code it is (its key, ``Demangler/key(_:)``, a
    /// closure's its function's) and which inlined copy of it (the positions of the frames it
    /// was inlined through: one copy per call written in the code).
    struct Site: Hashable, Sendable {
        var helper: String
        var instance: String
    }

    /// The site of every address of `dumps` that lies in an inlined helper, by object; only the
    /// profiled executable is looked at (a shared library's functions are the library's).
    /// `debugInformation` names, for an object the dumps name, the file that holds its debug
    /// information (the profiled copy is stripped of it: valgrind 3.19 cannot read Swift 6.3's;
    /// its addresses are the original's).
    static func helpers(of dumps: [CallgrindDump], debugInformation: [String: String] = [:])
        -> [String: [UInt64: Site]]
    {
        var addressesOf: [String: Set<UInt64>] = [:]
        for dump in dumps {
            for (object, costs) in dump.addresses where !MachineCode.isLibrary(object) {
                addressesOf[object, default: []].formUnion(costs.keys)
            }
            for site in dump.callSites.keys where !MachineCode.isLibrary(site.object) {
                addressesOf[site.object, default: []].insert(site.address)
            }
        }
        var answer: [String: [UInt64: Site]] = [:]
        for (object, addresses) in addressesOf {
            let file = debugInformation[object] ?? object
            guard FileManager.default.fileExists(atPath: file) else { continue }
            let input = addresses.sorted().map { "0x" + String($0, radix: 16) }.joined(separator: "\n") + "\n"
            guard
                let out = try? ChildLaunch.command(
                    "llvm-symbolizer",
                    ["--obj=" + file, "--inlining", "--functions=linkage", "--output-style=JSON"]
                ).run(input: Data(input.utf8), timeLimit: 300), out.status == 0, !out.timedOut
            else { continue }
            let found = helpers(symbolized: out.stdoutText)
            if !found.isEmpty { answer[object] = found }
        }
        return answer
    }

    /// ``helpers(of:debugInformation:)``'s `debugInformation` for a profiled copy of `original`
    /// at `copy`: the copy by each name a dump may give it.
    static func debugInformation(copy: URL, original: URL) -> [String: String] {
        let names = [copy.path, copy.standardizedFileURL.path, copy.resolvingSymlinksInPath().path]
        return names.reduce(into: [:]) { $0[$1] = original.resolvingSymlinksInPath().path }
    }

    /// One frame of an address's inline chain, as `llvm-symbolizer --output-style=JSON` gives it.
    struct Frame: Decodable {
        var functionName: String
        var fileName: String
        var startFileName: String?
        var line: Int?
        var column: Int?

        enum CodingKeys: String, CodingKey {
            case functionName = "FunctionName", fileName = "FileName", startFileName = "StartFileName"
            case line = "Line", column = "Column"
        }
    }

    private struct Answer: Decodable {
        var address: String
        var symbol: [Frame]

        enum CodingKeys: String, CodingKey {
            case address = "Address", symbol = "Symbol"
        }
    }

    /// The sites of `llvm-symbolizer`'s JSON answer (one object per line, an address each).
    static func helpers(symbolized text: String) -> [UInt64: Site] {
        let decoder = JSONDecoder()
        let answers = text.split(separator: "\n").compactMap { line -> (UInt64, [Frame])? in
            guard line.hasPrefix("{"), let found = try? decoder.decode(Answer.self, from: Data(line.utf8)),
                let address = UInt64(found.address.dropFirst(2), radix: 16), !found.symbol.isEmpty
            else { return nil }
            return (address, found.symbol)
        }
        let names = Demangler.keys(Set(answers.flatMap { $0.1.map(\.functionName) }))
        var answer: [UInt64: Site] = [:]
        for (address, frames) in answers {
            if let site = site(of: frames, keys: names) { answer[address] = site }
        }
        return answer
    }

    /// The site of an address whose inline chain is `frames` (innermost first, the containing
    /// function last; `keys` their symbols' keys): the helper is the innermost frame of the
    /// project's own code, a closure read as the function it is written in; its copy, the
    /// positions of the frames outside the outermost frame of that helper (where it was
    /// called). Nil when the helper is the containing function, or no frame of ours is inlined.
    /// An address of the containing function's own with no source location (line 0): code the
    /// optimizer made or moved (ARC's retains and releases, hoisted out of the helper they were
    /// written in), ``unplaced``.
    static func site(of frames: [Frame], keys names: [String: String]) -> Site? {
        if frames.count == 1, frames[0].line == 0 { return Site(helper: unplaced, instance: "") }
        guard frames.count > 1, let containing = frames.last else { return nil }
        func owner(_ frame: Frame) -> String { Self.owner(of: names[frame.functionName] ?? frame.functionName) }
        let outer = owner(containing)
        guard let innermost = frames.dropLast().firstIndex(where: { isOurs($0) && !$0.functionName.isEmpty })
        else { return nil }
        let helper = owner(frames[innermost])
        guard helper != outer else { return nil }
        var outermost = innermost
        while outermost + 1 < frames.count - 1, owner(frames[outermost + 1]) == helper { outermost += 1 }
        let calledFrom = frames[(outermost + 1)...].map { "\($0.line ?? 0):\($0.column ?? 0)" }
        return Site(helper: helper, instance: calledFrom.joined(separator: "<"))
    }

    /// The helper of the addresses without a source location (``site(of:keys:)``): not a
    /// function; the attribution shares its changed retains and releases among the helpers that
    /// gained theirs (``Comparison/chargingInlined``).
    static let unplaced = "(no source location)"

    /// The function a key's code is written in: a closure's or a `defer` block's enclosing
    /// function (`closure in closure in f()` → `f()`, `$defer #1 <A>() in f()` → `f()`), any
    /// other key itself.
    static func owner(of key: String) -> String {
        for prefix in ["closure in ", "implicit closure in "] where key.hasPrefix(prefix) {
            return owner(of: String(key.dropFirst(prefix.count)))
        }
        if key.hasPrefix("$defer") || key.hasPrefix("defer"), let end = key.range(of: ") in ") {
            return owner(of: String(key[end.upperBound...]))
        }
        return key
    }

    /// Whether the frame's function is the project's: declared in a file under a `Sources/`
    /// folder, not in a dependency's checkout (`.build/checkouts/`; the standard library's files
    /// lie in the toolchain's build folder, with no `Sources/`).
    static func isOurs(_ frame: Frame) -> Bool {
        let file = frame.startFileName.flatMap { $0.isEmpty ? nil : $0 } ?? frame.fileName
        return file.contains("/Sources/") && !file.contains("/checkouts/")
    }
}
