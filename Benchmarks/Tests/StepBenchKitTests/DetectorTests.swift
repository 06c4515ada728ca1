import Foundation
import StepBenchScenarios
import Testing

@testable import StepBenchCLI
@testable import StepBenchKit

/// `stepbench noise calibrate` on noise profiles made here, with fixed seeds: small enough for the
/// test command, and independent of the committed profiles (a refreshed results/ cannot break
/// it). The full calibration of the measured profiles (1,000 trials) is `stepbench noise calibrate`'s
/// own job, run by scripts/regress --update-baseline into results/<machine-id>/calibration.json.
@Suite("The timing detector, calibrated on synthetic noise")
struct DetectorTests {
    static let trials = 200

    /// A profile of the sync-step rows of `designs`: logistic per-repetition residuals of scale
    /// `residualScale` (its 101 quantiles, as `stepbench noise` keeps them) and a between-run
    /// drift of σ `driftSD`.
    static func profile(
        _ method: NoiseProfile.Method, designs: [String] = ["seed", "locked", "atomic"], driftSD: Double,
        residualScale: Double = 0.01, repetitions: Int = 15
    ) -> NoiseProfile {
        let quantiles = (0...100).map { i -> Double in
            let p = min(0.9995, max(0.0005, Double(i) / 100))
            return residualScale * log(p / (1 - p))
        }
        let entries = designs.map { design in
            NoiseProfile.Entry(
                key: MeasureKey(
                    target: .scenario(.syncStep), subject: Subject(name: design) ?? .foreign(design), threads: 1,
                    metric: .nsPerElementVsFloor),
                repetitions: repetitions, samplingSD: residualScale * 1.8 / Double(repetitions).squareRoot(),
                betweenSD: driftSD, driftSD: driftSD, residualQuantiles: quantiles)
        }
        return NoiseProfile(
            schema: NoiseProfile.currentSchema, machineId: "test-machine-2c", gitCommit: "0123456789",
            createdAt: "2026-11-24T00:00:00Z", runs: 10, method: method, entries: entries)
    }

    @Test("A/A and A/B on single runs that drift: quiet, and a 5% slowdown never called unchanged")
    func test_calibration_singleRunsThatDrift() throws {
        let c = try DetectorCalibration.run(Self.profile(.singleRun, driftSD: 0.02), name: "drift", trials: Self.trials)
        #expect(c.passed, "\(c.failures)")
        #expect(c.falseAlarms <= Self.trials / 100, "\(c.falseAlarmRows)")
        // the paired rows get the whole power curve, the reference port only the 5% point
        #expect(c.rows.map { $0.caught.count } == [1, 4, 4])
        for row in c.rows where row.caught.count == 4 {
            let caught = row.caught.map(\.trials)
            #expect(caught == caught.sorted(), "\(row.key): \(caught)")
            #expect(caught.last! > caught.first!, "\(row.key): a 30% slowdown caught no more often than 5%")
        }
    }

    @Test("interleaved processes with no drift: a 30% slowdown of a paired row caught in ≥ 95% of trials")
    func test_calibration_interleavedCatchesThirtyPercent() throws {
        let c = try DetectorCalibration.run(
            Self.profile(.interleavedProcesses, driftSD: 0), name: "ab", trials: Self.trials)
        #expect(c.passed, "\(c.failures)")
        for row in c.rows where row.mustCatch != nil {
            let caught = try #require(row.caught.first { $0.slowdown == 1.30 })
            #expect(caught.trials >= Self.trials * 95 / 100, "\(row.key): \(caught.trials)")
        }
        #expect(c.rows.filter { $0.mustCatch != nil }.map(\.key).count == 2)
    }

    /// The demands bite: an interleaved profile assumes no drift between the sides, so a real one
    /// (here 5%) makes false regressions, and the calibration says so.
    @Test("a profile whose noise the detector does not allow for fails its calibration")
    func test_calibration_failsWhereTheDetectorWouldRaiseFalseAlarms() throws {
        let c = try DetectorCalibration.run(
            Self.profile(.interleavedProcesses, driftSD: 0.05), name: "lying", trials: Self.trials)
        #expect(!c.passed)
        #expect(c.falseAlarms > Self.trials / 100)
        #expect(c.failures.contains { $0.hasPrefix("A/A:") }, "\(c.failures)")
    }

    @Test("a profile with no decided row is bad input, named")
    func test_calibration_needsADecidedRow() {
        var p = Self.profile(.singleRun, driftSD: 0.01)
        p.entries = p.entries.map {
            var e = $0; e.key.target = .scenario(.floorSync); return e
        }
        expectFailure(.missingInput) { try DetectorCalibration.run(p, name: "floors", trials: 100) }
    }

    @Test("stepbench noise calibrate writes the calibration atomically and exits 1 when a demand is not met")
    func test_cli_calibrateWritesItsFileEvenWhenItFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("calibrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("noise.json")
        let bad = folder.appendingPathComponent("noise-ab.json")
        try Self.profile(.singleRun, driftSD: 0.02).write(to: good)
        try Self.profile(.interleavedProcesses, driftSD: 0.05).write(to: bad)
        let output = folder.appendingPathComponent("calibration.json")

        try StepBench.Calibrate.parse([good.path, "--trials", "100", "--output", output.path]).run()
        let file = try JSONDecoder().decode(DetectorCalibration.File.self, from: Data(contentsOf: output))
        #expect(file.schema == DetectorCalibration.File.currentSchema && file.calibrations.map(\.passed) == [true])

        #expect(throws: StepBench.Failure.self) {
            try StepBench.Calibrate.parse([good.path, bad.path, "--trials", "100", "--output", output.path]).run()
        }
        let both = try JSONDecoder().decode(DetectorCalibration.File.self, from: Data(contentsOf: output))
        #expect(both.calibrations.map(\.passed) == [true, false])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
                "calibration.json", "noise-ab.json", "noise.json",
            ])
        let tooFew = #expect(throws: (any Error).self) { try StepBench.Calibrate.parse([good.path, "--trials", "10"]) }
        #expect(tooFew.map { StepBench.message(for: $0).contains("--trials 10: at least 100") } == true)
    }
}
