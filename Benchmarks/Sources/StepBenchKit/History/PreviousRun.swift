import Foundation
@_spi(StepBench) import SteppingConformance

/// The run a report compares with when no baseline is given: among the time-stamped runs of the
/// first file's folder made before it with the same settings (preset, threads, warm-up,
/// elements, repetition budget, hand-off; the repetitions and the order seed only change how
/// much was sampled), the newest made on a clean tree at this run's commit or an ancestor of it,
/// else the newest of them; with its profile when there is one.
public enum PreviousRun {
    public struct Settings: Decodable, Equatable, Sendable {
        var preset: String?
        var threads: [Int]?
        var warmup: Bool?
        var elementsOverride: Int?
        var repetitionBudget: Double?
        var handoff: String?

        enum CodingKeys: String, CodingKey {
            case preset, profile, threads, warmup, elementsOverride, repetitionBudget, handoff
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            // files written before the preset was named say "profile"
            preset =
                c.contains(.preset)
                ? try? c.decode(String.self, forKey: .preset) : try? c.decode(String.self, forKey: .profile)
            threads = try? c.decode([Int].self, forKey: .threads)
            warmup = try? c.decode(Bool.self, forKey: .warmup)
            elementsOverride = try? c.decode(Int.self, forKey: .elementsOverride)
            repetitionBudget = try? c.decode(Double.self, forKey: .repetitionBudget)
            handoff = try? c.decode(String.self, forKey: .handoff)
        }

        /// A file with no configuration: every setting missing.
        init() {}

        public init(_ c: ResultsFile.Configuration) {
            preset = c.preset.rawValue
            threads = c.threads
            warmup = c.warmup
            elementsOverride = c.elementsOverride
            repetitionBudget = c.repetitionBudget
            handoff = c.handoff
        }
    }

    /// What the choice reads of a candidate file.
    struct Candidate: Decodable {
        struct Machine: Decodable {
            var gitCommit: String?
            var gitDirty: Bool?
        }
        var createdAt: String?
        var configuration: Settings?
        var machine: Machine?
    }

    public static func find(
        in folder: String, besides files: [String], of results: ResultsFile, head: String, repository: String
    ) throws -> [String]? {
        let isRun = try Regex(#"^\d{4}-\d{2}-\d{2}T\d{6}Z\.json$"#)
        let mine = Set(files.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path })
        let settings = Settings(results.configuration)
        var candidates: [(clean: Bool, created: String, path: String)] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names.sorted() where name.wholeMatch(of: isRun) != nil {
            let path = (folder as NSString).appendingPathComponent(name)
            guard !mine.contains(URL(fileURLWithPath: path).resolvingSymlinksInPath().path),
                let data = FileManager.default.contents(atPath: path),
                let candidate = try? JSONDecoder().decode(Candidate.self, from: data),
                let created = candidate.createdAt, !created.isEmpty, created < results.createdAt,
                candidate.configuration ?? Settings() == settings
            else { continue }
            let clean =
                !(candidate.machine?.gitDirty ?? false)
                && isAncestor(candidate.machine?.gitCommit ?? "", of: head, in: repository)
            candidates.append((clean, created, path))
        }
        guard
            let best = candidates.max(by: {
                ($0.clean ? 1 : 0, $0.created, $0.path) < ($1.clean ? 1 : 0, $1.created, $1.path)
            })
        else { return nil }
        let profile = (folder as NSString).appendingPathComponent(
            "profile-" + (best.path as NSString).lastPathComponent)
        return [best.path] + (FileManager.default.fileExists(atPath: profile) ? [profile] : [])
    }

    /// Whether commit `older` is `newer` or an ancestor of it (false when git cannot tell).
    static func isAncestor(_ older: String, of newer: String, in repository: String) -> Bool {
        guard !older.isEmpty, !newer.isEmpty else { return false }
        let done = try? ChildLaunch.command("git", ["-C", repository, "merge-base", "--is-ancestor", older, newer])
            .run(timeLimit: 60)
        return done?.status == 0
    }
}
