import Foundation
import StepBenchScenarios

/// Files written before the preset was called a preset say `profile`: read under both names.
extension ResultsFile.Configuration {
    enum CodingKeys: String, CodingKey {
        case preset, repetitions, warmup, threads, elementsOverride, handoff, orderSeed, repetitionBudget
        /// The preset's key in files written before it was called a preset.
        case profile
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        preset = try c.decodeIfPresent(Preset.self, forKey: .preset) ?? c.decode(Preset.self, forKey: .profile)
        repetitions = try c.decode(Int.self, forKey: .repetitions)
        warmup = try c.decode(Bool.self, forKey: .warmup)
        threads = try c.decode([Int].self, forKey: .threads)
        elementsOverride = try c.decodeIfPresent(Int.self, forKey: .elementsOverride)
        handoff = try c.decode(String.self, forKey: .handoff)
        orderSeed = try c.decodeIfPresent(UInt64.self, forKey: .orderSeed)
        repetitionBudget = try c.decodeIfPresent(Double.self, forKey: .repetitionBudget)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(preset, forKey: .preset)
        try c.encode(repetitions, forKey: .repetitions)
        try c.encode(warmup, forKey: .warmup)
        try c.encode(threads, forKey: .threads)
        try c.encodeIfPresent(elementsOverride, forKey: .elementsOverride)
        try c.encode(handoff, forKey: .handoff)
        try c.encodeIfPresent(orderSeed, forKey: .orderSeed)
        try c.encodeIfPresent(repetitionBudget, forKey: .repetitionBudget)
    }
}
