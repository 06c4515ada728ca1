import Foundation

/// How the kit starts one of its child processes: an executable and the arguments that make it
/// answer a ``ChildRequest`` (the command line's hidden child command: the command line owns
/// its commands and hands the kit this value). The request goes on the child's standard input,
/// the answer comes back on its standard output.
public struct ChildProcess: Equatable, Sendable {
    public var executable: URL
    public var arguments: [String]

    public init(executable: URL, arguments: [String]) {
        self.executable = executable
        self.arguments = arguments
    }

    /// This process's own executable, started with `arguments`.
    public static func this(arguments: [String]) -> ChildProcess {
        ChildProcess(
            executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(), arguments: arguments)
    }

    /// The same child of another executable (a stripped copy of this one, a counting build).
    public func running(_ executable: URL) -> ChildProcess {
        ChildProcess(executable: executable, arguments: arguments)
    }

    /// The command that runs this child under `valgrind`'s callgrind, writing its dumps (with
    /// per-instruction counts, names uncompressed) to `output`.
    func underCallgrind(_ valgrind: String, output: URL) -> (command: String, arguments: [String]) {
        let tool = [
            "--tool=callgrind", "--callgrind-out-file=\(output.path)", "--dump-instr=yes", "--compress-strings=no",
            "--compress-pos=no",
        ]
        return (valgrind, tool + [executable.path] + arguments)
    }
}
