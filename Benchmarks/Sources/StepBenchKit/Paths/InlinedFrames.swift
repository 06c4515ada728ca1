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
    /// The helper (its key, ``Demangler/key(_:)``, a closure's its function's) of every address of `dumps`
    /// that has one, by object; only the profiled executable is looked at (a shared library's
    /// functions are the library's).
    static func helpers(of dumps: [CallgrindDump]) -> [String: [UInt64: String]] {
        var addressesOf: [String: Set<UInt64>] = [:]
        for dump in dumps {
            for (object, costs) in dump.addresses where !MachineCode.isLibrary(object) {
                addressesOf[object, default: []].formUnion(costs.keys)
            }
            for site in dump.callSites.keys where !MachineCode.isLibrary(site.object) {
                addressesOf[site.object, default: []].insert(site.address)
            }
        }
        var answer: [String: [UInt64: String]] = [:]
        for (object, addresses) in addressesOf where FileManager.default.fileExists(atPath: object) {
            let sorted = addresses.sorted()
            let input = sorted.map { "0x" + String($0, radix: 16) }.joined(separator: "\n") + "\n"
            guard
                let out = try? ChildLaunch.command(
                    "llvm-symbolizer",
                    ["--obj=" + object, "--inlining", "--functions=linkage", "--output-style=JSON"]
                ).run(input: Data(input.utf8), timeLimit: 300), out.status == 0, !out.timedOut
            else { continue }
            let found = helpers(symbolized: out.stdoutText)
            if !found.isEmpty { answer[object] = found }
        }
        return answer
    }

    /// One frame of an address's inline chain, as `llvm-symbolizer --output-style=JSON` gives it.
    struct Frame: Decodable {
        var functionName: String
        var fileName: String
        var startFileName: String?

        enum CodingKeys: String, CodingKey {
            case functionName = "FunctionName", fileName = "FileName", startFileName = "StartFileName"
        }
    }

    private struct Answer: Decodable {
        var address: String
        var symbol: [Frame]

        enum CodingKeys: String, CodingKey {
            case address = "Address", symbol = "Symbol"
        }
    }

    /// The helpers of `llvm-symbolizer`'s JSON answer (one object per line, an address each).
    static func helpers(symbolized text: String) -> [UInt64: String] {
        let decoder = JSONDecoder()
        let answers = text.split(separator: "\n").compactMap { line -> (UInt64, [Frame])? in
            guard line.hasPrefix("{"), let found = try? decoder.decode(Answer.self, from: Data(line.utf8)),
                let address = UInt64(found.address.dropFirst(2), radix: 16), found.symbol.count > 1
            else { return nil }
            return (address, found.symbol)
        }
        let names = Demangler.keys(Set(answers.flatMap { $0.1.map(\.functionName) }))
        var answer: [UInt64: String] = [:]
        for (address, frames) in answers {
            if let helper = helper(of: frames, keys: names) { answer[address] = helper }
        }
        return answer
    }

    /// The helper of an address whose inline chain is `frames` (innermost first, the
    /// containing function last; `keys` their symbols' keys): the key of the innermost frame
    /// of the project's own code, a closure read as the function it is written in; nil when
    /// that is the containing function, or no frame of ours is inlined.
    static func helper(of frames: [Frame], keys names: [String: String]) -> String? {
        guard frames.count > 1, let containing = frames.last else { return nil }
        func owner(_ frame: Frame) -> String { Self.owner(of: names[frame.functionName] ?? frame.functionName) }
        let outer = owner(containing)
        for frame in frames.dropLast() where isOurs(frame) && !frame.functionName.isEmpty {
            return owner(frame) == outer ? nil : owner(frame)
        }
        return nil
    }

    /// The function a key's code is written in: a closure's enclosing function (`closure in
    /// closure in f()` → `f()`), any other key itself.
    static func owner(of key: String) -> String {
        var key = key
        while key.hasPrefix("closure in ") { key.removeFirst("closure in ".count) }
        if key.hasPrefix("implicit closure in ") {
            return owner(of: String(key.dropFirst("implicit closure in ".count)))
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
