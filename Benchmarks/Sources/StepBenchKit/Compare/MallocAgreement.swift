import Foundation
import StepBenchScenarios

/// package-benchmark's malloc counts against stepbench's jemalloc counts (`stepbench gate agree`, a
/// step of the CI gate). Both tools run the same scenarios and count allocations over the same
/// window (the scenario's meter opens and closes package-benchmark's measurement). For every
/// benchmark of the suite whose allocation count the code fixes, its `mallocCountTotal` (the p90
/// per iteration `benchmark thresholds update --path DIR` writes), divided by the elements an
/// iteration counts, must match stepbench's allocations per element (its summary's median) for
/// the same scenario, design, threads and elements, within the catalog's tolerance per element
/// (``Catalog/Benchmark/allocationTolerance``, the one `compare` and the thresholds use too).
public struct MallocAgreement: Codable, Equatable, Sendable {
    public struct Row: Codable, Equatable, Sendable {
        public var benchmark: String
        public var threads: Int
        /// package-benchmark's malloc-interposer count per element.
        public var interposer: Double
        /// stepbench's jemalloc count per element.
        public var jemalloc: Double
        public var tolerance: Double
        public var agrees: Bool
    }

    /// One row per benchmark with an exact count, by name.
    public var rows: [Row]
    public var agrees: Bool { rows.allSatisfy(\.agrees) }

    /// The benchmark file prefix and suffix `benchmark thresholds update --path DIR` writes.
    static let filePrefix = "SteppingBenchmarks.", fileSuffix = ".p90.json"

    /// `mallocCountTotal` per benchmark name, from the `SteppingBenchmarks.<name>.p90.json` files
    /// of `directory`.
    public static func benchmarkCounts(in directory: URL) throws -> [String: Int] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw ResultsError(
                .unreadable,
                "\(directory.path): no such folder; run `swift package --package-path Benchmarks benchmark thresholds update --path \(directory.path)` first"
            )
        }
        struct Thresholds: Decodable { var mallocCountTotal: Int? }
        var counts: [String: Int] = [:]
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        for entry in entries where entry.hasPrefix(filePrefix) && entry.hasSuffix(fileSuffix) {
            let path = directory.appendingPathComponent(entry).path
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw ResultsError(.unreadable, "\(path): unreadable (\(error))")
            }
            let thresholds: Thresholds
            do { thresholds = try JSONDecoder().decode(Thresholds.self, from: data) } catch {
                throw ResultsError(.wrongKind, "\(path): not a package-benchmark threshold file (\(error))")
            }
            guard let count = thresholds.mallocCountTotal else {
                throw ResultsError(
                    .missingInput, "\(path): no mallocCountTotal; was the suite run with the malloc-interposer trait?")
            }
            counts[String(entry.dropFirst(filePrefix.count).dropLast(fileSuffix.count))] = count
        }
        guard !counts.isEmpty else {
            throw ResultsError(.missingInput, "\(directory.path): no \(filePrefix)*\(fileSuffix) files")
        }
        return counts
    }

    /// The agreement of `counts` (package-benchmark's, by benchmark) with stepbench's `rows`
    /// (`source` names their files), for the suite's `benchmarks`: each benchmark with an exact
    /// count must have been measured by stepbench too, at its threads and elements.
    public static func check(
        counts: [String: Int], rows: [ResultsFile.Row], benchmarks: [Catalog.Benchmark], source: String
    ) throws -> MallocAgreement {
        let suite = Dictionary(uniqueKeysWithValues: benchmarks.map { ($0.name, $0) })
        var measured: [String: ResultsFile.Row] = [:]  // by "scenario design threads"
        for row in rows where row.status != .excluded {  // excluded: not run, a declared fatal issue
            guard row.status == .ok else {
                throw ResultsError(
                    .verificationFailed,
                    "\(source): \(row.scenario.rawValue) \(row.design) ×\(row.threads) failed its verification: \(row.failure ?? "no message")"
                )
            }
            measured["\(row.scenario.rawValue) \(row.design.name) \(row.threads)"] = row
        }
        var result: [Row] = []
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) {
            guard let spec = suite[name] else {
                throw ResultsError(
                    .unknownName, "\(name): not a benchmark of the catalog; run the suite of the same build")
            }
            guard spec.exactAllocations else { continue }
            guard let row = measured["\(spec.scenario) \(spec.design) \(spec.threads)"] else {
                throw ResultsError(
                    .missingInput,
                    "\(name): stepbench measured no \(spec.scenario) \(spec.design) at \(spec.threads) thread(s); run it for every benchmark with an exact count"
                )
            }
            guard row.elements == spec.elements else {
                throw ResultsError(
                    .incompatible,
                    "\(name): stepbench measured \(row.elements) elements per repetition, the benchmark \(spec.elements); run stepbench with the benchmark's --elements"
                )
            }
            guard let tolerance = spec.allocationTolerance else {
                throw ResultsError(
                    .missingInput, "\(name): the catalog gives no allocation tolerance for an exact count")
            }
            guard let jemalloc = row.summary?.allocationsPerElement.median,
                let counted = row.repetitions.first?.elements
            else { throw ResultsError(.missingInput, "\(source): \(name) has no repetitions or summary") }
            // A repetition counts threads × elements where each thread runs a pipeline of its own.
            let interposer = Double(count) / Double(counted)
            result.append(
                Row(
                    benchmark: name, threads: row.threads, interposer: interposer, jemalloc: jemalloc,
                    tolerance: tolerance, agrees: abs(interposer - jemalloc) <= tolerance))
        }
        guard !result.isEmpty else {
            throw ResultsError(.missingInput, "no benchmark was measured by both tools; nothing was checked")
        }
        return MallocAgreement(rows: result)
    }

    /// The table `stepbench gate agree` prints, and its last line.
    public var text: String {
        let header =
            "benchmark".padding(toLength: 24, withPad: " ", startingAt: 0)
            + "threads  interposer/elem  jemalloc/elem  tolerance  verdict"
        let lines = rows.map { r in
            r.benchmark.padding(toLength: 24, withPad: " ", startingAt: 0)
                + String(format: "%7d  %15.4f  %13.4f  %9.4f  ", r.threads, r.interposer, r.jemalloc, r.tolerance)
                + (r.agrees ? "agree" : "DISAGREE")
        }
        let bad = rows.filter { !$0.agrees }.count
        let last =
            bad == 0
            ? "all \(rows.count) agree within their tolerance (the catalog's allocation tolerance per element)"
            : "\(bad) of \(rows.count) benchmarks disagree by more than their tolerance (the catalog's allocation tolerance per element)"
        return ([header] + lines + [last]).joined(separator: "\n") + "\n"
    }
}
