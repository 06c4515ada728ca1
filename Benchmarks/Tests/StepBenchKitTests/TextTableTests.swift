import Testing

@testable import StepBenchKit

@Suite("Text tables")
struct TextTableTests {
    @Test func test_textTable_padsEveryColumnToItsWidestCell() {
        let rows = [["design", "ns", "status"], ["atomic", "1234", "ok"], ["seed", "5", "FAILED: –"]]
        #expect(
            TextTable(rows: rows).render() == """
                design  ns    status   \n\
                atomic  1234  ok       \n\
                seed    5     FAILED: –\n
                """)
        let right = TextTable(rows: rows, alignment: { c, _ in c == 1 ? .right : .left })
        #expect(right.render().split(separator: "\n")[2] == "seed       5  FAILED: –")
    }
}
