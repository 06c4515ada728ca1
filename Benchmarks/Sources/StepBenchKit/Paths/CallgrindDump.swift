import Foundation
import StepBenchScenarios

/// One dump part of a callgrind run made with `--dump-instr=yes --compress-strings=no
/// --compress-pos=no`: its trigger, its total, and its exclusive instructions by function and
/// by (object, instruction address). Addresses are the object's own (as `objdump -d` prints
/// them), which callgrind writes for executables and shared objects alike.
struct CallgrindDump {
    /// "Client Request: stepbench-window …" for a window's dump.
    var trigger = ""
    var total: UInt64 = 0
    var functions: [String: UInt64] = [:]
    /// The calls each function made, by (caller, callee): how many, and what they cost in all
    /// (callgrind's `cfn=` and `calls=` records; the callee and everything it called).
    var calls: [CallEdge: CallCost] = [:]
    /// Exclusive instructions executed at each address, and the function the address is in,
    /// by object path.
    var addresses: [String: [UInt64: (cost: UInt64, function: String)]] = [:]
    /// The calls made from each call instruction: by its object and address, the caller and
    /// the callee, how many and what they cost in all (the same calls as ``calls``, placed).
    var callSites: [CallSite: CallCost] = [:]

    /// A call instruction (its object and address) and the call it makes.
    struct CallSite: Hashable, Sendable {
        var object: String
        var address: UInt64
        var edge: CallEdge
    }

    init(contentsOf url: URL) throws {
        let text = try String(contentsOf: url, encoding: .utf8)
        var object = "", function = "", callee = "", skipNext = false, callCount: UInt64 = 0
        var sum: UInt64 = 0, summary: UInt64? = nil
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("0x") {
                if skipNext {  // the inclusive cost of the call above: not this function's own
                    skipNext = false
                    let fields = line.split(separator: " ")
                    guard fields.count >= 2, let cost = UInt64(fields[fields.count - 1]),
                        let site = UInt64(fields[0].dropFirst(2), radix: 16)
                    else {
                        throw CallgrindDumpError("\(url.lastPathComponent): unreadable call cost line '\(line)'")
                    }
                    let edge = CallEdge(caller: function, callee: callee)
                    calls[edge, default: CallCost()].add(count: callCount, inclusive: cost)
                    callSites[CallSite(object: object, address: site, edge: edge), default: CallCost()].add(
                        count: callCount, inclusive: cost)
                    continue
                }
                let fields = line.split(separator: " ")
                guard fields.count >= 3, let address = UInt64(fields[0].dropFirst(2), radix: 16),
                    let cost = UInt64(fields[fields.count - 1])
                else { throw CallgrindDumpError("\(url.lastPathComponent): unreadable cost line '\(line)'") }
                functions[function, default: 0] += cost
                addresses[object, default: [:]][address, default: (0, function)].cost += cost
                sum += cost
            } else if line.hasPrefix("ob=") {
                object = String(line.dropFirst(3))
            } else if line.hasPrefix("fn=") {
                function = String(line.dropFirst(3))
            } else if line.hasPrefix("cfn=") {
                callee = String(line.dropFirst(4))
            } else if line.hasPrefix("calls=") {
                // "calls=COUNT TARGET": the next cost line is what those calls cost in all
                guard let count = UInt64(line.dropFirst(6).prefix { $0 != " " }) else {
                    throw CallgrindDumpError("\(url.lastPathComponent): unreadable calls line '\(line)'")
                }
                callCount = count
                skipNext = true
            } else if line.hasPrefix("desc: Trigger: ") {
                trigger = String(line.dropFirst("desc: Trigger: ".count))
            } else if line.hasPrefix("summary: ") {
                summary = UInt64(line.split(separator: " ").last ?? "")
            }
        }
        // The summary is what the part counted; its cost lines (their sum is the part's "totals")
        // must be that and nothing more: lines holding more carry costs from before the window.
        guard let summary else {
            throw CallgrindDumpError("\(url.lastPathComponent): no summary line; is it a whole callgrind dump part?")
        }
        total = summary
        guard sum == total else {
            throw CallgrindDumpError(
                "\(url.lastPathComponent): the cost lines add up to \(sum) instructions, the part counted \(total): "
                    + (sum > total
                        ? "they hold costs from before the window (open it with a dump, not CALLGRIND_ZERO_STATS)"
                        : "lines are missing (a truncated file?)"))
        }
    }

    /// The parts of the run written to `output` (callgrind's `--callgrind-out-file`): `output.1`,
    /// `output.2`, … for the client requests' dumps; `output` itself is the dump at exit. The
    /// parts that open a window (``MeasuredWindow/openLabel``: what ran before it) are left
    /// unread.
    static func parts(of output: URL) throws -> [CallgrindDump] {
        let folder = output.deletingLastPathComponent()
        let prefix = output.lastPathComponent + "."
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasPrefix(prefix) && Int($0.dropFirst(prefix.count)) != nil }
            .sorted { Int($0.dropFirst(prefix.count))! < Int($1.dropFirst(prefix.count))! }
        return try names.map { folder.appendingPathComponent($0) }.filter { !(try opensAWindow($0)) }
            .map { try CallgrindDump(contentsOf: $0) }
    }

    /// Whether the part at `url` is one a window's open wrote: its trigger, read from the header
    /// (the part's first lines) without reading the costs.
    static func opensAWindow(_ url: URL) throws -> Bool {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let head = String(decoding: try handle.read(upToCount: 4096) ?? Data(), as: UTF8.self)
        return head.split(separator: "\n").contains {
            $0 == "desc: Trigger: Client Request: \(MeasuredWindow.openLabel)"
        }
    }
}

struct CallgrindDumpError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = "callgrind output: " + description }
}

extension ResultsFile.FunctionCost {
    /// The functions that cost at least half an instruction per event (or element) between two
    /// windows' exclusive counts, most expensive first (ties by name, so every run lists them
    /// alike), at most `kept`: a profile's and a path's top functions.
    static func top(_ low: [String: UInt64], _ high: [String: UInt64], span: Double, keeping kept: Int)
        -> [ResultsFile.FunctionCost]
    {
        var costs: [(name: String, perEvent: Double)] = []
        for (name, cost) in high {
            let perEvent = (Double(cost) - Double(low[name] ?? 0)) / span
            if perEvent >= 0.5 { costs.append((name, perEvent)) }
        }
        costs.sort { $0.perEvent != $1.perEvent ? $0.perEvent > $1.perEvent : $0.name < $1.name }
        return costs.prefix(kept).map {
            ResultsFile.FunctionCost(function: Demangler.readable($0.name), instructionsPerElement: $0.perEvent)
        }
    }
}
