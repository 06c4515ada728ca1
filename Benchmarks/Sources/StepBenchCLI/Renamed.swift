import ArgumentParser

/// A command's old name, kept for a while: hidden from the help, it takes the new command's
/// arguments, says the new name on stderr and runs the new command (its output and exit status
/// unchanged).
protocol RenamedCommand: ParsableCommand {
    associatedtype Target: ParsableCommand
    /// The old name, e.g. `read`.
    static var oldName: String { get }
    /// The new command line's words, e.g. `show document`.
    static var newName: String { get }
    var target: Target { get }
}

extension RenamedCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: oldName, abstract: "Renamed: `stepbench \(newName)`; this name will go.",
            shouldDisplay: false)
    }

    /// The note every old name prints on stderr before it runs the new command.
    static var note: String { "stepbench \(oldName): renamed `stepbench \(newName)`; this name will go\n" }

    func run() throws {
        printError(Self.note)
        var target = target
        try target.run()
    }
}

extension StepBench {
    /// The old names of the commands the tree moved, and where each went.
    static let renamed: [any RenamedCommand.Type] = [
        ReadRenamed.self, RankRenamed.self, ExportRenamed.self, MachineRenamed.self, CalibrateRenamed.self,
        AgreeRenamed.self, SeriesRenamed.self, DetectRenamed.self, PairedRenamed.self,
    ]

    struct ReadRenamed: RenamedCommand {
        static let oldName = "read", newName = "show document"
        @OptionGroup var target: Read
    }
    struct RankRenamed: RenamedCommand {
        static let oldName = "rank", newName = "show ranking"
        @OptionGroup var target: Rank
    }
    struct ExportRenamed: RenamedCommand {
        static let oldName = "export", newName = "show export"
        @OptionGroup var target: Export
    }
    struct MachineRenamed: RenamedCommand {
        static let oldName = "machine", newName = "show machine"
        @OptionGroup var target: Machine
    }
    struct CalibrateRenamed: RenamedCommand {
        static let oldName = "calibrate", newName = "noise calibrate"
        @OptionGroup var target: Calibrate
    }
    struct AgreeRenamed: RenamedCommand {
        static let oldName = "agree", newName = "gate agree"
        @OptionGroup var target: Agree
    }
    struct SeriesRenamed: RenamedCommand {
        static let oldName = "series", newName = "history series"
        @OptionGroup var target: Series
    }
    struct DetectRenamed: RenamedCommand {
        static let oldName = "detect", newName = "history detect"
        @OptionGroup var target: Detect
    }
    /// `paired A1 B1 …` is `compare --paired A1 B1 …`.
    struct PairedRenamed: RenamedCommand {
        static let oldName = "paired", newName = "compare --paired"
        @OptionGroup var target: Paired
    }
}
