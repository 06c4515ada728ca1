import ArgumentParser
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

    /// Every command of the tree, groups and their subcommands, hidden ones too.
    static func commands(_ root: ParsableCommand.Type = StepBench.self) -> [ParsableCommand.Type] {
        [root] + root.configuration.subcommands.flatMap { commands($0) }
    }

    @Test("each command's help says the statuses it ends with, in the table's words and numbers")
    func test_exitStatus_eachCommandsHelpSaysItsStatuses() {
        let mention = /(?i)\bexit(s|ed)?( status)?:? (\d|status)/
        var documented = 0
        // the root prints the whole table (above); every other command one sentence of its own
        for command in Self.commands().dropFirst() where !(command is any RenamedCommand.Type) {
            let configuration = command.configuration
            var text = configuration.abstract + " " + configuration.discussion
            if let documents = command as? any DocumentsExitStatuses.Type {
                let sentence = ExitStatus.sentence(documents.exitStatuses)
                #expect(text.contains(sentence), "\(command): its help lacks \(sentence)")
                text = text.replacingOccurrences(of: sentence, with: "")
                documented += 1
            }
            // no status named anywhere else in its help: one sentence, made from the table
            #expect(text.firstMatch(of: mention) == nil, "\(command): an exit status outside its sentence: \(text)")
        }
        #expect(documented >= 9, "\(documented) commands document their statuses")
        #expect(
            ExitStatus.sentence([.slower: "x", .ok: "fine"])
                == "Exit status: 0 fine; 2 x; 1 bad input or a failure.")
    }

    @Test("no command's code ends with a status its help does not give")
    func test_exitStatus_theCodeThrowsOnlyWhatItsCommandsDocument() throws {
        let folder = Self.repository.appendingPathComponent("Benchmarks/Sources/StepBenchCLI")
        let byName = Dictionary(
            Self.commands().map { (String(describing: $0), $0) }, uniquingKeysWith: { first, _ in first })
        // the code of `compare --paired` stands in Paired.swift
        let alsoFor = ["Paired.swift": ["Compare"]]
        let thrown = /ExitStatus\.(\w+)\.code/
        var checked = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        where file.hasSuffix(".swift") && !["ExitStatus.swift", "StepBench.swift"].contains(file) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let names = text.matches(of: /struct (\w+): ParsableCommand/).map { String($0.1) } + (alsoFor[file] ?? [])
            var allowed: Set<StepBenchCLI.ExitStatus> = [.ok, .failure]
            for name in names {
                if let documents = byName[name] as? any DocumentsExitStatuses.Type {
                    allowed.formUnion(documents.exitStatuses.map(\.key))
                }
            }
            var statuses = Set(
                text.matches(of: thrown).compactMap { m in
                    ExitStatus.allCases.first { "\($0)" == String(m.1) }
                })
            // a kit failure's status follows its kind: 3 for a failed verification
            if text.contains("ExitStatus(failure.kind)") { statuses.insert(.verificationFailed) }
            #expect(
                statuses.isSubset(of: allowed),
                "\(file) ends with \(statuses.subtracting(allowed)), which none of \(names) documents")
            checked += statuses.isEmpty ? 0 : 1
        }
        #expect(checked >= 8, "\(checked) files end with a status")
    }
}
