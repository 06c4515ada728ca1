import Foundation
import Testing

@testable import StepBenchKit

/// One input layer (``Inputs``): every command reads results files, noise profiles, machines and
/// run folders through it, and finds its defaults there.
@Suite("the input layer")
struct InputLayerTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// The readers only ``Inputs`` calls, and the defaults only it finds (a name, not a longer
    /// one: `ResultsFile.readableSchemas` is no reader).
    static let readers =
        #"(ResultsFile\.(read|decode)|NoiseProfile\.(read|defaultPath)|MachineFingerprint\.read|RunFolder\.read|PreviousRun\.find|ConformanceVerdict\.read|decode\((ResultsFile|NoiseProfile|ConformanceVerdict)\.self)(?![A-Za-z])"#
    static let types = [
        "ResultsFile", "NoiseProfile", "MachineFingerprint", "RunFolder", "PreviousRun", "ConformanceVerdict",
    ]
    /// Where a reader may be called besides: the folder reader reads its files, each reader
    /// decodes its own document, and a measuring child's answer comes on a pipe, not from a file.
    static let allowed: [String: Set<String>] = [
        "StepBenchKit/History/RunFolder.swift": ["ResultsFile.decode"],
        "StepBenchKit/Passes/PassRequest.swift": ["decode(ResultsFile.self"],
        "StepBenchKit/Results/ResultsFile+IO.swift": ["decode(ResultsFile.self"],
        "StepBenchKit/Compare/NoiseProfile.swift": ["decode(NoiseProfile.self"],
        "StepBenchKit/Results/ConformanceVerdict.swift": ["decode(ConformanceVerdict.self"],
    ]

    @Test("no code outside the input layer calls a file reader or finds a default")
    func test_readersAreCalledOnlyFromTheInputLayer() throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: Self.sources.path)
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 50, "\(Self.sources.path): \(files.count) Swift files")
        let readers = try Regex(Self.readers)
        var found: [String] = []
        for file in files where file != "StepBenchKit/Results/Inputs.swift" {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard !line.trimmingCharacters(in: .whitespaces).hasPrefix("//"),
                    Self.types.contains(where: { line.contains($0) })  // the regex only where it can match
                else { continue }
                for match in line.matches(of: readers)
                where Self.allowed[file]?.contains(String(line[match.range])) != true {
                    found.append("\(file):\(i + 1): \(line[match.range])")
                }
            }
        }
        #expect(found.isEmpty, "read through Inputs instead: \(found.joined(separator: "; "))")
    }

    @Test("a name is a file or a folder: its latest.json, a noise profile's noise.json")
    func test_aFolderMeansItsLatestOrItsNoiseProfile() throws {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = MergeTests.process(1)
        try run.write(to: folder.appendingPathComponent("latest.json"))
        #expect(
            try Inputs.results(folder.path) == (try Inputs.results(folder.appendingPathComponent("latest.json").path)))
        #expect(try Inputs.machine(folder.path) == run.machine)
        expectFailure(.unreadable) { try Inputs.noiseProfile(folder.path) }  // no noise.json yet
        let noise = try NoiseProfile.measure(runs: [run, run, run])
        try noise.write(to: folder.appendingPathComponent("noise.json"))
        #expect(try Inputs.noiseProfile(folder.path) == noise)
        #expect(
            Inputs.defaultNoiseProfile(besides: folder.path).found == folder.appendingPathComponent("noise.json").path)
        // the conformance verdict beside the results
        #expect(try Inputs.conformanceVerdict(besides: folder.path) == nil)
        let verdict = ConformanceVerdict(designs: ["atomic"], conforms: true, rules: [], measured: [])
        try JSONEncoder().encode(verdict).write(to: folder.appendingPathComponent("conformance.json"))
        #expect(try Inputs.conformanceVerdict(besides: folder.path)?.designs == ["atomic"])
        #expect(try Inputs.conformanceVerdict(folder.path).designs == ["atomic"])
        expectFailure(.wrongKind) { try Inputs.conformanceVerdict(folder.appendingPathComponent("latest.json").path) }
        // one file is itself; several are combined, each row once
        let one = try Inputs.combined([folder.path], acrossBuilds: true)
        #expect(one == (try Inputs.results(folder.path)) && one.kind == .run)
        expectFailure(.incompatible) { try Inputs.combined([folder.path, folder.path], acrossBuilds: true) }
    }
}
