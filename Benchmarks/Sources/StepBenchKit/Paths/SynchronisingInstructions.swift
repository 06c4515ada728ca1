import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance

/// The addresses of an object's synchronising instructions, from its disassembly
/// (`objdump -d`): every `lock`-prefixed read-modify-write (compare-exchange, exchange-add, and
/// the others), every `xchg` with a memory operand (implicitly locked: an x86 sequentially
/// consistent store is one), and every `mfence`. What a callgrind count at these addresses adds
/// up to is the number of synchronising instructions executed.
struct SynchronisingInstructions {
    private var cache: [String: Set<UInt64>] = [:]

    /// Disassembles every object of `dumps` not disassembled yet, one per core at a time (a
    /// second each for the runtime's libraries, a dozen of them: one after the other they were
    /// the profile's last quarter-minute).
    mutating func prepare(for dumps: [CallgrindDump]) throws {
        let objects = Array(Set(dumps.flatMap(\.addresses.keys))).filter { cache[$0] == nil }.sorted()
        for (object, found) in zip(objects, try parallelMap(objects, Self.disassemble)) { cache[object] = found }
    }

    /// The addresses in `object` (a path callgrind names); empty for an object objdump cannot read.
    mutating func addresses(in object: String) throws -> Set<UInt64> {
        if let known = cache[object] { return known }
        let found = try Self.disassemble(object)
        cache[object] = found
        return found
    }

    static func disassemble(_ object: String) throws -> Set<UInt64> {
        var found = Set<UInt64>()
        if FileManager.default.fileExists(atPath: object) {
            // grep keeps the candidates only: a runtime library disassembles to hundreds of MB.
            let result = try ChildLaunch.command(
                "bash",
                [
                    "-c",
                    "set -o pipefail; objdump -d --no-show-raw-insn \"$1\" | { grep -E '\t(lock |mfence|xchg)' || true; }",
                    "bash", object,
                ]
            ).run(timeLimit: 600)
            guard !result.timedOut else {
                throw CallgrindDumpError("objdump -d \(object) ran past 600 s and was stopped")
            }
            guard result.status == 0 else {
                throw CallgrindDumpError("objdump -d \(object) exited \(result.status); install binutils")
            }
            for line in result.stdoutText.split(separator: "\n") {
                guard let address = Self.synchronisingAddress(String(line)) else { continue }
                found.insert(address)
            }
        }
        return found
    }

    /// The address of a disassembly line ("  4a1f2:\tlock cmpxchg %rcx,(%rdx)") if its
    /// instruction synchronises.
    static func synchronisingAddress(_ line: String) -> UInt64? {
        let parts = line.split(separator: "\t", maxSplits: 1)
        guard parts.count == 2, parts[0].hasSuffix(":"),
            let address = UInt64(parts[0].dropLast().trimmingCharacters(in: .whitespaces), radix: 16)
        else { return nil }
        let instruction = parts[1].trimmingCharacters(in: .whitespaces)
        let mnemonic = instruction.split(separator: " ").first.map(String.init) ?? ""
        let synchronises =
            mnemonic == "lock" || mnemonic == "mfence"
            || (mnemonic.hasPrefix("xchg") && instruction.contains("("))
        return synchronises ? address : nil
    }

    /// The synchronising instructions `dump` executed, in all and by function.
    mutating func count(in dump: CallgrindDump) throws -> (total: UInt64, functions: [String: UInt64]) {
        var total: UInt64 = 0
        var functions: [String: UInt64] = [:]
        for (object, costs) in dump.addresses {
            let wanted = try addresses(in: object)
            guard !wanted.isEmpty else { continue }
            for (address, spent) in costs where wanted.contains(address) {
                total += spent.cost
                functions[spent.function, default: 0] += spent.cost
            }
        }
        return (total, functions)
    }
}
