import Foundation
import Testing

@testable import StepBenchKit
@testable import StepBenchScenarios

/// Every export format round-trips: parsing back what was written gives the same figures.
@Suite("stepbench show export formats")
struct ExportTests {
    let file = ResultsFileTests.sample()
    var metrics: [Exporter.Figure] { Exporter.figures(file) }

    @Test func test_export_csvRoundTrips() throws {
        let lines = Exporter.csv(file).split(separator: "\n").map(String.init)
        let header = lines[0].split(separator: ",").map(String.init)
        #expect(header.first == "scenario" && header.contains("median"))
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.count == metrics.count)
        for (row, m) in zip(rows, metrics) {
            #expect(row.count == header.count)
            #expect(row[0] == m.scenario && row[1] == m.design && Int(row[2]) == m.threads && row[3] == m.name)
            #expect(Double(row[5]) == m.median && Double(row[6]) == m.ciLow && Double(row[7]) == m.ciHigh)
        }
    }

    @Test func test_export_githubActionBenchmarkRoundTrips() throws {
        let text = try Exporter.githubActionBenchmark(file)
        let entries = try JSONDecoder().decode([Exporter.BenchmarkEntry].self, from: Data(text.utf8))
        let smaller = metrics.filter(\.smallerIsBetter)
        #expect(entries.count == smaller.count)
        #expect(!entries.contains { $0.name.contains("elements_per_second") }, "customSmallerIsBetter only")
        for (e, m) in zip(entries, smaller) {
            #expect(e.value == m.median && e.unit == m.unit)
            #expect(e.name == "\(m.scenario) \(m.design) x\(m.threads) \(m.name)")
        }
    }

    @Test func test_export_influxRoundTrips() throws {
        let lines = try Exporter.influx(file).split(separator: "\n").map(String.init)
        var parsed: [String: Double] = [:]
        for line in lines {
            let parts = line.split(separator: " ").map(String.init)
            #expect(parts.count == 3, "measurement+tags, fields, timestamp: \(line)")
            let tags = Dictionary(
                uniqueKeysWithValues: parts[0].split(separator: ",").dropFirst().map { t -> (String, String) in
                    let kv = t.split(separator: "=", maxSplits: 1); return (String(kv[0]), String(kv[1]))
                })
            #expect(parts[0].hasPrefix("stepbench,"))
            #expect(Int64(parts[2]) == 1_795_305_600_000_000_000, "timestamp of 2026-11-22T00:00:00Z in ns")
            for field in parts[1].split(separator: ",") {
                let kv = field.split(separator: "=")
                parsed["\(tags["scenario"]!) \(tags["design"]!) \(tags["threads"]!) \(kv[0])"] = Double(kv[1])
            }
        }
        #expect(parsed.count == metrics.count)
        for m in metrics { #expect(parsed["\(m.scenario) \(m.design) \(m.threads) \(m.name)"] == m.median) }
    }

    @Test func test_export_influxNeedsTheRunStart() throws {
        var other = file
        other.createdAt = "2026-11-22T00:00:00.750Z"
        let text = try Exporter.influx(other)
        let line = try #require(text.split(separator: "\n").first)
        #expect(line.hasSuffix(" 1795305600000000000"), "fractional seconds are read, and cut to the second")
        other.createdAt = "yesterday"
        expectFailure(.malformed) { try Exporter.influx(other) }
    }

    @Test func test_export_escapesTagValues() {
        #expect(Exporter.escape("a b,c=d") == #"a\ b\,c\=d"#)
    }
}
