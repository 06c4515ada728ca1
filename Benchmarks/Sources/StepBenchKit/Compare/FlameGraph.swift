import Foundation

/// A differential flame graph of one moved row, drawn from the two whole profiles' call edges
/// (not from sampled stacks): each frame is a call path from the window's outermost functions,
/// as wide as its instructions per event in the current build, and coloured by how much its own
/// (exclusive) instructions moved: red more, blue fewer, grey unchanged.
///
/// A call graph keeps no stacks, so a path's cost is estimated as a profiler without stacks
/// does (gprof): a function reached along an edge takes that edge's share of its inclusive
/// instructions, and hands it on to its callees in the proportions of its own edges. Exact when
/// each function has one caller, as on the stepping paths' own code; a runtime function called
/// from several places is split among them by its edges' costs.
public struct FlameGraph: Equatable, Sendable {
    /// One frame: a call path (outermost first), its instructions per event before and after.
    public struct Frame: Equatable, Sendable {
        public var path: [String]
        public var before: Double
        public var after: Double
        /// Its own (exclusive) instructions per event, before and after.
        public var selfBefore: Double
        public var selfAfter: Double
        public var key: String { path.last ?? "" }
    }

    public var title: String
    /// Outermost first, then depth-first in the current build's order (widest first).
    public var frames: [Frame]
    public var totalBefore: Double
    public var totalAfter: Double

    /// Deeper paths are cut (recursion, the runtime's own depths).
    static let maxDepth = 48
    /// Frames narrower than this fraction of the graph are not drawn (nor their callees).
    static let minFraction = 0.0005

    public init(title: String, before: ResultsFile.CallProfile, after: ResultsFile.CallProfile) {
        self.title = title
        let old = Self.paths(of: before), new = Self.paths(of: after)
        totalBefore = old.total
        totalAfter = new.total
        // the current build's frames in its order, then the frames only the baseline had (gone)
        frames = (new.order + old.order.filter { new.costs[$0] == nil }).map { path in
            let b = old.costs[path], a = new.costs[path]
            return Frame(
                path: path, before: b?.inclusive ?? 0, after: a?.inclusive ?? 0, selfBefore: b?.exclusive ?? 0,
                selfAfter: a?.exclusive ?? 0)
        }
    }

    struct Cost { var inclusive: Double, exclusive: Double }

    /// Every call path of a profile with its estimated instructions per event, and their order
    /// (depth-first, widest first).
    static func paths(of profile: ResultsFile.CallProfile) -> (
        costs: [[String]: Cost], order: [[String]], total: Double
    ) {
        var exclusive: [String: Double] = [:], inclusive: [String: Double] = [:]
        var out: [String: [ResultsFile.CallProfile.Edge]] = [:]
        var called: Set<String> = []
        for edge in profile.edges where edge.caller != edge.callee {
            out[edge.caller, default: []].append(edge)
            called.insert(edge.callee)
            // a function the profile does not list (its own count did not move: main, a thunk)
            // passes its callers' cost through: its inclusive is what its callers' edges carry
            inclusive[edge.callee, default: 0] += edge.inclusivePerEvent
        }
        for f in profile.functions {
            exclusive[f.key] = f.exclusivePerEvent
            inclusive[f.key] = f.inclusivePerEvent
        }
        for key in out.keys {
            out[key]!.sort {
                $0.inclusivePerEvent != $1.inclusivePerEvent
                    ? $0.inclusivePerEvent > $1.inclusivePerEvent : $0.callee < $1.callee
            }
        }
        // The graph is as wide as the row's count (its functions' exclusive counts and what is
        // unattributed), whatever callgrind's outermost frames add up to: `(below main)` and
        // `__libc_start_main` may both claim a thread's whole cost.
        let total = max(profile.functions.reduce(profile.unattributedPerEvent) { $0 + $1.exclusivePerEvent }, 1e-12)
        // the outermost functions: those nothing listed calls, widest first
        var roots = Set(out.keys).union(exclusive.keys).filter { !called.contains($0) && (inclusive[$0] ?? 0) > 0 }
            .sorted { inclusive[$0]! != inclusive[$1]! ? inclusive[$0]! > inclusive[$1]! : $0 < $1 }
        if roots.isEmpty {
            // Every function is called by another (keys folded into a cycle: `(below main)`,
            // code without a symbol): the outermost of those that hold the whole count.
            let whole = inclusive.filter { abs($0.value - total) <= 0.005 * total }.map(\.key)
            let outermost = whole.filter { key in
                !whole.contains { other in other != key && (out[other] ?? []).contains { $0.callee == key } }
            }
            roots = Array((outermost.isEmpty ? whole : outermost).sorted().prefix(1))
        }
        let floor = total * minFraction
        var costs: [[String]: Cost] = [:], order: [[String]] = []
        // What a call into `key` reached along `path` spends other than going back up the path:
        // its own count and its calls to functions not on the path. A key folded from several
        // symbols (callgrind's cycle copies of `(below main)`) can call its own ancestors; that
        // part of its inclusive count is not a frame.
        func onward(_ key: String, _ path: [String]) -> Double {
            (out[key] ?? []).reduce(exclusive[key] ?? 0) {
                path.contains($1.callee) || $1.callee == key ? $0 : $0 + $1.inclusivePerEvent
            }
        }
        func visit(_ path: [String], _ width: Double) {
            let key = path.last!
            guard width >= floor else { return }
            order.append(path)
            // the callees' edges, each less what it spends going back up the path, and the own
            // count, scaled to the frame's width together (gprof's split of a shared callee)
            let calls = path.count < maxDepth ? (out[key] ?? []).filter { !path.contains($0.callee) } : []
            let values = calls.map { edge -> Double in
                let all = inclusive[edge.callee] ?? 0
                return all > 0 ? edge.inclusivePerEvent * min(1, onward(edge.callee, path + [edge.callee]) / all) : 0
            }
            let own = exclusive[key] ?? 0
            let needed = values.reduce(own, +)
            let scale = needed > 0 ? width / needed : 0
            for (edge, value) in zip(calls, values) where value * scale > 0 {
                visit(path + [edge.callee], value * scale)
            }
            costs[path] = Cost(inclusive: width, exclusive: needed > 0 ? own * scale : width)
        }
        var used = 0.0
        for root in roots where total - used > floor {
            let w = min(inclusive[root]!, total - used)
            used += w
            visit([root], w)
        }
        return (costs, order, total)
    }

    /// The graph as a standalone SVG: frames outermost at the bottom, widths of the current
    /// build (the baseline's where a frame is gone), each frame's tooltip its path's counts.
    public func svg(width: Double = 1200) -> String {
        let rowHeight = 17.0, top = 58.0, left = 10.0, plot = width - 2 * left
        let depth = frames.map(\.path.count).max() ?? 1
        let height = top + Double(depth) * rowHeight + 42
        let scale = plot / max(totalAfter, totalBefore, 1e-12)
        let biggest = frames.map { abs($0.selfAfter - $0.selfBefore) }.max() ?? 0
        var x: [[String]: Double] = [:]  // each frame's left edge
        var next: [[String]: Double] = [:]  // where the parent's next callee starts
        var body: [String] = []
        for frame in frames {
            let parent = Array(frame.path.dropLast())
            let start = parent.isEmpty ? (next[[]] ?? left) : (next[parent] ?? x[parent] ?? left)
            let w = min((frame.after > 0 ? frame.after : frame.before) * scale, left + plot - start)
            x[frame.path] = start
            next[parent] = start + w
            guard w >= 0.3 else { continue }
            let y = height - 42 - Double(frame.path.count) * rowHeight
            let delta = frame.selfAfter - frame.selfBefore
            let fill = Self.colour(delta: delta, biggest: biggest, gone: frame.after == 0)
            let tip =
                "\(frame.path.joined(separator: " ← ").reversedCallChain)\ninclusive \(Self.number(frame.before)) → \(Self.number(frame.after)) per event; self \(Self.number(frame.selfBefore)) → \(Self.number(frame.selfAfter)) (\(String(format: "%+.2f", delta)))"
            var label = ""
            let characters = Int((w - 6) / 6.6)
            if characters >= 3 {
                label = frame.key.count <= characters ? frame.key : String(frame.key.prefix(characters - 2)) + ".."
            }
            body.append(
                "<g><title>\(Self.escape(tip))</title><rect x=\"\(Self.coordinate(start))\" y=\"\(Self.coordinate(y))\" width=\"\(Self.coordinate(w))\" height=\"\(Self.coordinate(rowHeight - 1))\" fill=\"\(fill)\" rx=\"2\"/>"
                    + (label.isEmpty
                        ? ""
                        : "<text x=\"\(Self.coordinate(start + 3))\" y=\"\(Self.coordinate(y + 12))\">\(Self.escape(label))</text>")
                    + "</g>")
        }
        let subtitle =
            "instructions per event \(Self.number(totalBefore)) → \(Self.number(totalAfter)) (\(String(format: "%+.2f", totalAfter - totalBefore))). Width: the current build's; colour: a frame's own instructions, red more, blue fewer, grey unchanged (hover for counts)."
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.coordinate(width))" height="\(Self.coordinate(height))" viewBox="0 0 \(Self.coordinate(width)) \(Self.coordinate(height))" font-family="Verdana, sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(Self.coordinate(width / 2))" y="22" text-anchor="middle" font-size="15">\(Self.escape(title))</text>
            <text x="\(Self.coordinate(width / 2))" y="42" text-anchor="middle" fill="#444444">\(Self.escape(subtitle))</text>
            \(body.joined(separator: "\n"))
            <text x="\(Self.coordinate(left))" y="\(Self.coordinate(height - 14))" fill="#444444">From the two whole profiles' call edges (callgrind), not sampled stacks: a function called from several places is split among them by its edges' costs.</text>
            </svg>

            """
    }

    /// Red for more, blue for fewer instructions of the frame's own, by how much of the largest
    /// move; grey when it moved by less than half an instruction per event.
    static func colour(delta: Double, biggest: Double, gone: Bool) -> String {
        if gone { return "rgb(150,170,230)" }
        guard abs(delta) >= 0.5, biggest > 0 else { return "rgb(222,222,222)" }
        let strength = 0.35 + 0.65 * min(1, abs(delta) / biggest)
        let fade = Int((1 - strength) * 215)
        return delta > 0 ? "rgb(235,\(fade),\(fade))" : "rgb(\(fade),\(fade + 20),235)"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func coordinate(_ v: Double) -> String { String(format: "%.1f", v) }

    static func number(_ v: Double) -> String { v >= 100 ? String(format: "%.0f", v) : String(format: "%.2f", v) }

    /// A file name for a row's graph: its target and design, nothing a file system minds.
    public static func fileName(target: String, design: String) -> String {
        let safe = "\(target)_\(design)".map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        return "flame-\(String(safe)).svg"
    }
}

extension String {
    /// "a ← b ← c" of a path outermost first, read innermost first: "c ← b ← a".
    fileprivate var reversedCallChain: String {
        components(separatedBy: " ← ").reversed().joined(separator: " ← ")
    }
}
