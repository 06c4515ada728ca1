import Foundation
import Testing

@testable import StepBenchCLI

/// One exit-status table: every command's statuses come from ``ExitStatus``, and `stepbench
/// help` and the README print the same table.
@Suite("exit statuses")
struct ExitStatusTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("statuses 0 to 5, each with its own meaning, in the help")
    func test_exitStatus_tableIsInTheHelp() {
        #expect(ExitStatus.allCases.map(\.rawValue) == Array(0...5))
        #expect(Set(ExitStatus.allCases.map(\.meaning)).count == ExitStatus.allCases.count)
        let help = StepBench.helpMessage(columns: 1000)
        for status in ExitStatus.allCases {
            #expect(help.contains("\(status.rawValue) \(status.meaning.prefix(30))"), "\(status) not in the help")
        }
    }

    @Test("no command makes an ExitCode of its own: every status is an ExitStatus")
    func test_exitStatus_noLiteralOutsideTheTable() throws {
        let folder = Self.repository.appendingPathComponent("Benchmarks/Sources/StepBenchCLI")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10, "\(folder.path): \(files)")
        for file in files where file != "ExitStatus.swift" {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for pattern in ["ExitCode(", "ExitCode.", "exit(0)", "exit(1)", "exit(2)", "exit(3)", "exit(4)", "exit(5)"]
            {
                #expect(!text.contains(pattern), "\(file) uses \(pattern): throw an ExitStatus's code instead")
            }
        }
    }

    @Test("the help lists the commands by purpose: every visible command in one group, the children hidden")
    func test_help_groupsTheCommandsByPurpose() {
        let configuration = StepBench.configuration
        let groups = configuration.groupedSubcommands
        #expect(groups.map(\.name) == ["Measure", "Read", "Decide", "History"])
        let grouped = groups.flatMap(\.subcommands).map { $0._commandName }
        #expect(Set(grouped).count == grouped.count, "a command in two groups: \(grouped)")
        #expect(configuration.ungroupedSubcommands.allSatisfy { !$0.configuration.shouldDisplay })
        let help = StepBench.helpMessage(columns: 1000)
        for group in groups { #expect(help.contains("\(group.name.uppercased()) SUBCOMMANDS:"), "\(group.name)") }
        for name in grouped { #expect(help.contains("\n  \(name) "), "\(name) not in the help") }
        #expect(grouped.count <= 12, "\(grouped.count) top-level commands: \(grouped)")
        // the old names run their new commands, hidden from the help
        for old in StepBench.renamed {
            #expect(!old.configuration.shouldDisplay, "\(old.oldName)")
            #expect(!help.contains("\n  \(old.oldName) "), "\(old.oldName) is listed")
            #expect(!grouped.contains(old.oldName), "\(old.oldName) is a command and an old name")
        }
    }

    @Test("the README prints the same table")
    func test_exitStatus_readmeHasTheTable() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        for status in ExitStatus.allCases {
            #expect(
                readme.contains("| \(status.rawValue) | \(status.meaning) |"),
                "README lacks exit status \(status.rawValue)")
        }
    }
}
