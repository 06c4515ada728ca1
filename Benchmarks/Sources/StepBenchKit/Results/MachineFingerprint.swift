import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance

/// Where and how a results file was made. Two files are comparable only on one machine kind.
public struct MachineFingerprint: Codable, Equatable, Sendable {
    public var cpuModel: String
    public var cores: Int
    public var kernel: String
    public var swiftVersion: String
    public var gitCommit: String
    public var gitDirty: Bool
    public var buildConfiguration: String
    public var allocator: String

    /// A file-system-safe name for this machine kind: CPU model and core count.
    public var machineID: String { Self.machineID(cpuModel: cpuModel, cores: cores) }

    /// The one formula of a machine kind's name (`results/<machine-id>/`; scripts ask
    /// `stepbench show machine` for it).
    public static func machineID(cpuModel: String, cores: Int) -> String {
        let slug = cpuModel.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        let collapsed = String(slug).split(separator: "-").joined(separator: "-")
        return "\(collapsed.isEmpty ? "unknown-cpu" : collapsed)-\(cores)c"
    }

    /// This machine's kind, without the rest of the fingerprint (no git, no swift).
    public static var currentMachineID: String {
        machineID(cpuModel: currentCPUModel, cores: ProcessInfo.processInfo.activeProcessorCount)
    }

    /// The CPU model of /proc/cpuinfo ("unknown" where there is none).
    static var currentCPUModel: String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        return cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
    }

    public static var buildConfigurationOfThisBinary: String {
        #if DEBUG
            "debug"
        #else
            "release"
        #endif
    }

    /// Reads the fingerprint of this machine and checkout (`directory`: the git work tree).
    public static func current(directory: String = FileManager.default.currentDirectoryPath) -> MachineFingerprint {
        let model = currentCPUModel
        var uts = utsname()
        uname(&uts)
        let release = withUnsafeBytes(of: &uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let commit = run("git", ["-C", directory, "rev-parse", "HEAD"]) ?? "unknown"
        let dirty = isDirty(directory: directory)
        let swift = ProcessInfo.processInfo.environment["STEPBENCH_SWIFT_VERSION"] ?? swiftVersion() ?? "unknown"
        return MachineFingerprint(
            cpuModel: model, cores: ProcessInfo.processInfo.activeProcessorCount,
            kernel: "Linux \(release)", swiftVersion: swift, gitCommit: commit,
            gitDirty: dirty, buildConfiguration: buildConfigurationOfThisBinary,
            allocator: AllocationCounter.allocatorDescription)
    }

    /// Whether the checkout at `directory` has uncommitted changes to tracked files outside its
    /// `results/`: what the bench writes there (scripts/bench's profile before its run, a
    /// refreshed baseline) is its output, not the code it measured.
    static func isDirty(directory: String) -> Bool {
        let measured = ["--", ":(top)", ":(top,exclude)results"]
        let changed = run("git", ["-C", directory, "status", "--porcelain", "--untracked-files=no"] + measured)
        return !(changed ?? "").isEmpty
    }

    /// The first line of `swift --version`. The Swift driver makes a folder
    /// (`TemporaryDirectory.XXXXXX`, holding `.keep-directory`) in its TMPDIR on every call and
    /// leaves it, so it runs with a TMPDIR of its own under `temporary`, removed after.
    static func swiftVersion(temporary: URL = FileManager.default.temporaryDirectory) -> String? {
        let own = temporary.appendingPathComponent("stepbench-swift-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: own) }
        let made = (try? FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)) != nil
        return run("swift", ["--version"], environment: made ? ["TMPDIR": own.path] : [:])?
            .split(separator: "\n").first.map(String.init)
    }

    /// Runs a command; its trimmed stdout, or nil if it failed.
    static func run(_ command: String, _ arguments: [String], environment: [String: String] = [:]) -> String? {
        guard let result = try? ChildLaunch.command(command, arguments, environment: environment).run(timeLimit: 20),
            result.status == 0
        else {
            return nil
        }
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension MachineFingerprint {
    /// The machine a results or profile file was measured on: its `machine` alone, so that a
    /// file's kind is known whatever else it holds.
    public static func read(from url: URL) throws -> MachineFingerprint {
        struct Header: Decodable { var machine: MachineFingerprint }
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ResultsError(.unreadable, "\(url.path): cannot read (\(error.localizedDescription))")
        }
        do { return try JSONDecoder().decode(Header.self, from: data).machine } catch {
            throw ResultsError(
                .wrongKind,
                "\(url.path): no machine fingerprint (\(error)); is it a results file of `stepbench run`?")
        }
    }
}
