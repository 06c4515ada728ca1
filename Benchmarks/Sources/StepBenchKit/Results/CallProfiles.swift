import Foundation
@_spi(StepBench) import SteppingConformance

/// A profile file's whole call profiles live beside it, compressed: `NAME.json` →
/// `NAME.calls.json.gz` (gzip, no name or time in its header, of compact JSON with sorted keys,
/// so that one profile always writes the same bytes). Whole, they are tens of megabytes (the
/// asynchronous peers' paths run hundreds of functions of the concurrency runtime); inside the
/// results file they would make every reader of it slow. ``ResultsFile/write(to:)`` writes the
/// pair; ``ResultsFile/read(_:)`` attaches them again, so every command sees whole rows. A
/// results file whose rows carry `callProfile` themselves (a hand-made one) reads as it is.
struct CallProfiles: Codable, Equatable {
    struct Entry: Codable, Equatable {
        /// "profile" (a scenario's per-element row) or "path".
        var kind: String
        var target: String
        var design: String
        var callProfile: ResultsFile.CallProfile
    }

    var schema = "stepbench-calls/1"
    var entries: [Entry]

    /// `profile-….json` → `profile-….calls.json.gz`.
    static func url(beside file: URL) -> URL {
        let name = file.deletingPathExtension().lastPathComponent
        return file.deletingLastPathComponent().appendingPathComponent("\(name).calls.json.gz")
    }

    /// Takes the call profiles out of `file`'s rows.
    static func take(from file: inout ResultsFile) -> CallProfiles {
        var entries: [Entry] = []
        for i in (file.profiles ?? []).indices {
            guard let profile = file.profiles![i].callProfile else { continue }
            let row = file.profiles![i]
            entries.append(
                .init(kind: "profile", target: row.scenario.rawValue, design: row.design.name, callProfile: profile))
            file.profiles![i].callProfile = nil
        }
        for i in (file.paths ?? []).indices {
            guard let profile = file.paths![i].callProfile else { continue }
            let row = file.paths![i]
            entries.append(
                .init(kind: "path", target: row.path.rawValue, design: row.design.name, callProfile: profile))
            file.paths![i].callProfile = nil
        }
        return CallProfiles(entries: entries)
    }

    /// Puts them back into `file`'s rows, by kind, target and design.
    func attach(to file: inout ResultsFile) {
        var byKey: [String: ResultsFile.CallProfile] = [:]
        for entry in entries { byKey["\(entry.kind) \(entry.target) \(entry.design)"] = entry.callProfile }
        for i in (file.profiles ?? []).indices {
            let row = file.profiles![i]
            file.profiles![i].callProfile = byKey["profile \(row.scenario.rawValue) \(row.design.name)"]
        }
        for i in (file.paths ?? []).indices {
            let row = file.paths![i]
            file.paths![i].callProfile = byKey["path \(row.path.rawValue) \(row.design.name)"]
        }
    }

    func compressed() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let outcome = try ChildLaunch.command("gzip", ["-c", "-n", "-6"]).run(
            input: try encoder.encode(self), timeLimit: 300)
        guard outcome.succeeded else {
            throw ResultsError(
                .toolFailed,
                "cannot compress the call profiles (gzip: exit \(outcome.status)): \(outcome.stderrText)")
        }
        return outcome.stdout
    }

    static func read(_ url: URL) throws -> CallProfiles {
        let outcome: ChildLaunch.Outcome
        do { outcome = try ChildLaunch.command("gzip", ["-d", "-c", url.path]).run(timeLimit: 300) } catch {
            throw ResultsError(.toolFailed, "\(url.relativePath): cannot run gzip to read it (\(error))")
        }
        guard outcome.succeeded else {
            throw ResultsError(
                .malformed, "\(url.relativePath): not a gzip file it can read (gzip: \(outcome.stderrText))")
        }
        do { return try JSONDecoder().decode(CallProfiles.self, from: outcome.stdout) } catch {
            throw ResultsError(.malformed, "\(url.relativePath): not the call profiles of a profile file (\(error))")
        }
    }
}
