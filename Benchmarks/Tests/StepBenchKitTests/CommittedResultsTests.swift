import Foundation
import Testing

@testable import StepBenchKit

/// The committed results files (results/<machine-id>/) read with this build, and what they
/// measured is written back as it is on disk: the same scenario, design (or floor) and threads
/// for every row, profile and path, in the same order. Designs are open values now; their
/// names on disk are the results files' contract.
@Suite("committed results files")
struct CommittedResultsTests {
    static let results = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("results")

    /// (scenario or path, design, threads) of each entry of `key`, as JSON holds them.
    static func identities(_ json: [String: Any], _ key: String) -> [String] {
        (json[key] as? [[String: Any]] ?? []).map { entry in
            ["scenario", "path", "design", "threads"].map { "\(entry[$0] ?? "-")" }.joined(separator: "|")
        }
    }

    /// Every committed JSON file whose name `matches`, with its machine folder's name and its
    /// content as JSON.
    static func committedFiles(_ matches: (String) -> Bool) throws -> [(name: String, url: URL, raw: [String: Any])] {
        let manager = FileManager.default
        var files: [(String, URL, [String: Any])] = []
        for machine in try manager.contentsOfDirectory(atPath: results.path).sorted() {
            let folder = results.appendingPathComponent(machine)
            guard (try? folder.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true else { continue }
            for name in try manager.contentsOfDirectory(atPath: folder.path).sorted()
            where name.hasSuffix(".json") && matches(name) {
                let url = folder.appendingPathComponent(name)
                let raw = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
                files.append(("\(machine)/\(name)", url, raw))
            }
        }
        return files
    }

    @Test("every committed results file reads, and its keys are written back unchanged")
    func test_committedResults_readUnchanged() throws {
        var read = 0
        for (name, url, raw) in try Self.committedFiles({ _ in true }) {
            guard let schema = raw["schema"] as? String, ResultsFile.readableSchemas.contains(schema) else { continue }
            let file = try ResultsFile.read(url)
            let written = try #require(
                try JSONSerialization.jsonObject(with: JSONOutput.encode(file)) as? [String: Any])
            for key in ["rows", "profiles", "paths"] {
                #expect(Self.identities(written, key) == Self.identities(raw, key), "\(name): \(key)")
            }
            read += 1
        }
        #expect(read >= 20, "read \(read) results files under \(Self.results.path)")
    }

    @Test("every committed results file converts on read to the document its name says")
    func test_committedResults_areTheDocumentsTheirNamesSay() throws {
        var kinds: [ResultsFile.Kind: Int] = [:]
        for (name, url, raw) in try Self.committedFiles({ _ in true }) {
            guard let schema = raw["schema"] as? String, ResultsFile.readableSchemas.contains(schema) else { continue }
            let file = try ResultsFile.read(url)
            let base = url.lastPathComponent
            let expected: ResultsFile.Kind =
                base.hasPrefix("profile") ? .profile : base == "baseline.json" ? .combination : .run
            #expect(file.kind == expected, "\(name): \(file.kind), expected \(expected)")
            kinds[file.kind, default: 0] += 1
        }
        #expect(kinds[.run, default: 0] >= 20 && kinds[.profile, default: 0] >= 20, "\(kinds)")
    }

    @Test("every committed noise profile reads, its entries keyed by the rows results files name")
    func test_committedNoiseProfiles_readUnchanged() throws {
        var read = 0
        for (name, url, raw) in try Self.committedFiles({ $0.hasPrefix("noise") }) {
            let profile = try NoiseProfile.read(url)
            let written = try #require(
                try JSONSerialization.jsonObject(with: JSONOutput.encode(profile)) as? [String: Any])
            #expect(Self.identities(written, "entries") == Self.identities(raw, "entries"), "\(name)")
            // a typed key: every entry is a row of a scenario this build knows
            #expect(profile.entries.allSatisfy { $0.row.description.hasPrefix($0.scenario.rawValue) })
            read += 1
        }
        #expect(read >= 2, "read \(read) noise profiles under \(Self.results.path)")
    }
}
