import Foundation
import StepBenchScenarios
@_spi(StepBench) import SteppingConformance

/// A results folder (results/<machine-id>/) read as a history: its results and profile files in
/// commit order, and the files left out with why (`stepbench history series`, read by scripts/history).
///
/// Left out: copies of another file (latest.json, profile-latest.json repeat a time-named one),
/// noise profiles and calibrations, the gate's baselines (their own elements and repetitions),
/// debug builds, and files with neither rows nor profiles. Anything else that is not a readable
/// results file is bad input, named with what to do.
public struct RunFolder: Sendable {
    public struct Run: Sendable {
        public var name: String
        public var file: ResultsFile
        public var commit: String
        public var createdEpoch: Double
        /// The commit's committer time from git; nil when git does not know the commit.
        public var commitTime: Double?
    }

    public struct Skipped: Codable, Equatable, Sendable {
        public var file: String
        public var reason: String
    }

    public var folder: String
    public var machineId: String
    /// In history order: by the commit's time where git knows it, else by the file's createdAt;
    /// several files of one commit in createdAt order.
    public var runs: [Run]
    public var skipped: [Skipped]

    public static func read(_ folder: String) throws -> RunFolder {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw ResultsError(
                .unreadable, "\(folder): no such folder; pass a results folder, e.g. results/<machine-id>/")
        }
        guard isFolder.boolValue else {
            let parent = (folder as NSString).deletingLastPathComponent
            throw ResultsError(
                .wrongKind,
                "\(folder): not a folder; pass the folder holding the results files (e.g. \(parent.isEmpty ? "." : parent)/), not one file"
            )
        }
        // Copies repeat a time-named file: the time-named one is read first and kept.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }
            .sorted { ($0.hasSuffix("latest.json") ? 1 : 0, $0) < ($1.hasSuffix("latest.json") ? 1 : 0, $1) }
        var runs: [Run] = []
        var skipped: [Skipped] = []
        var byContent: [Data: String] = [:]
        for name in names {
            let path = (folder as NSString).appendingPathComponent(name)
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw ResultsError(
                    .unreadable,
                    "\(path): cannot read (\(error.localizedDescription)); fix its permissions or move it out of the folder"
                )
            }
            if let original = byContent[data] {
                skipped.append(Skipped(file: name, reason: "a copy of \(original)"))
                continue
            }
            if let reason = try reasonToLeaveOut(name: name, path: path, data: data) {
                skipped.append(Skipped(file: name, reason: reason))
                continue
            }
            guard let file = try readRun(data, path) else {
                skipped.append(
                    Skipped(file: name, reason: "names a scenario or path this build does not know"))
                continue
            }
            byContent[data] = name
            if file.machine.buildConfiguration == "debug" {
                skipped.append(
                    Skipped(file: name, reason: "a debug build: not comparable with release runs"))
                continue
            }
            if file.rows.isEmpty && (file.profiles ?? []).isEmpty {
                skipped.append(Skipped(file: name, reason: "no rows and no profiles"))
                continue
            }
            guard let created = ResultsFile.date(createdAt: file.createdAt)?.timeIntervalSince1970 else {
                throw ResultsError(
                    .malformed,
                    "\(path): createdAt '\(file.createdAt)' is not an ISO 8601 time; a results file from `stepbench run` always has one"
                )
            }
            runs.append(Run(name: name, file: file, commit: file.machine.gitCommit.lowercased(), createdEpoch: created))
        }
        guard let first = runs.first else {
            let left = skipped.isEmpty ? "" : " (left out: \(skipped.map(\.file).joined(separator: ", ")))"
            throw ResultsError(
                .missingInput,
                "\(folder): no results files\(left); run scripts/bench (it writes results/<machine-id>/<time>.json) or pass the folder that holds them"
            )
        }
        var kinds: [(id: String, file: String)] = []
        for run in runs where !kinds.contains(where: { $0.id == run.file.machine.machineID }) {
            kinds.append((run.file.machine.machineID, run.name))
        }
        if kinds.count > 1 {
            throw ResultsError(
                .incompatible,
                "\(folder): files of several machine kinds: \(kinds.map { "\($0.id) (\($0.file))" }.joined(separator: ", ")); a history is of one machine kind, keep each kind in its own results/<machine-id>/ folder"
            )
        }
        var times: [String: Double?] = [:]
        for i in runs.indices {
            let commit = runs[i].commit
            if times[commit] == nil { times[commit] = commitTime(folder: folder, commit: commit) }
            runs[i].commitTime = times[commit]!
        }
        runs.sort { a, b in
            (a.commitTime ?? a.createdEpoch, a.createdEpoch, a.name) < (
                b.commitTime ?? b.createdEpoch, b.createdEpoch, b.name
            )
        }
        return RunFolder(folder: folder, machineId: first.file.machine.machineID, runs: runs, skipped: skipped)
    }

    /// The results file `data` (read from `path`), or nil when it names a scenario or path this build
    /// does not know (a file of a build with more, or fewer, of them). Throws when it is
    /// unreadable or malformed otherwise.
    static func readRun(_ data: Data, _ path: String) throws -> ResultsFile? {
        do {
            return try ResultsFile.decode(data, from: URL(fileURLWithPath: path))
        } catch let error as ResultsError {
            if case .dataCorrupted(let context)? = error.underlying as? DecodingError,
                let key = context.codingPath.last?.stringValue, ["scenario", "path"].contains(key)
            {
                return nil
            }
            throw error
        }
    }

    /// Why a file that is not a run is left out (nil: it is read as one). Throws for a file that
    /// is no StepBench file at all.
    static func reasonToLeaveOut(name: String, path: String, data: Data) throws -> String? {
        struct Header: Decodable { var schema: String? }
        guard (try? JSONSerialization.jsonObject(with: data)) != nil else {
            throw ResultsError(
                .wrongKind,
                "\(path): not JSON; every writer here writes atomically, so this is not a StepBench file: move it out of the folder"
            )
        }
        let schema = (try? JSONDecoder().decode(Header.self, from: data))?.schema
        if let schema, schema.hasPrefix("stepbench-noise/") {
            return "a noise profile, read for the drift allowances"
        }
        if let schema, schema.hasPrefix("stepbench-calibration/") {
            return "the timing detector's calibration on the noise profiles"
        }
        if let schema, schema.hasPrefix("stepbench-conformance/") {
            return "the conformance verdict (scripts/conformance), read for the report's table"
        }
        if name.hasPrefix("baseline") {
            return "the regression gate's reference, written by scripts/regress with its own elements and repetitions"
        }
        guard let schema, ResultsFile.readableSchemas.contains(schema) else {
            throw ResultsError(
                .wrongKind,
                "\(path): \(schema.map { "'\($0)'" } ?? "no schema"), expected a results or profile file (\(ResultsFile.readableSchemas.joined(separator: " or "))); move it out of the folder or re-run `stepbench run`"
            )
        }
        return nil
    }

    /// The commit's committer time from git (nil when git does not know it).
    static func commitTime(folder: String, commit: String) -> Double? {
        guard (7...40).contains(commit.count), commit.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            return nil
        }
        guard
            let done = try? ChildLaunch.command("git", ["-C", folder, "log", "-1", "--format=%ct", commit, "--"]).run(
                timeLimit: 60),
            done.status == 0
        else { return nil }
        let out = done.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        return out.allSatisfy(\.isNumber) ? Double(out) : nil
    }
}
