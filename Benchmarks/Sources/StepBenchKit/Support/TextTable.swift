/// A plain-text table, the one the tool prints everywhere: each column padded to its widest
/// cell (in characters), cells two spaces apart, every line ending in a newline.
struct TextTable {
    enum Alignment { case left, right }

    var rows: [[String]]
    /// How column `column` of a row of `count` cells is aligned (default: left).
    var alignment: (_ column: Int, _ count: Int) -> Alignment = { _, _ in .left }

    func render() -> String {
        guard let header = rows.first else { return "" }
        let widths = header.indices.map { c in rows.map { $0.count > c ? $0[c].count : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { c, cell in
                let padding = String(repeating: " ", count: max(0, widths[c] - cell.count))
                return alignment(c, row.count) == .left ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
