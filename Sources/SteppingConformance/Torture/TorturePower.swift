import Foundation
@_spi(Measurement) import Stepping

/// How often a stochastic torture case catches a race, measured on a design that has it: the
/// rounds it ran and the rounds that caught a violation, the per-round catch rate with its
/// one-sided 95% lower bound (Clopper–Pearson), and the probability that one run of the case
/// (``TortureCase/rounds`` rounds) misses the race at that bound. Rounds are taken as
/// independent trials: each has a fresh subscriber, and nothing carries from one to the next.
public struct TorturePower: Sendable, CustomStringConvertible {
    /// The case measured.
    public let torture: TortureCase
    /// The design it ran on.
    public let design: String
    /// Runs of the case, each of every round (none stops at its first catch).
    public let runs: Int
    /// Rounds run, and rounds that caught a violation.
    public let roundsRun: Int
    public let roundsCaught: Int

    /// A tally of `runs` runs of `torture` on the design named `design`.
    public init(torture: TortureCase, design: String, runs: Int, roundsRun: Int, roundsCaught: Int) {
        precondition(0 <= roundsCaught && roundsCaught <= roundsRun, "caught \(roundsCaught) of \(roundsRun) rounds")
        self.torture = torture
        self.design = design
        self.runs = runs
        self.roundsRun = roundsRun
        self.roundsCaught = roundsCaught
    }

    /// The measured per-round catch rate.
    public var catchRate: Double { roundsRun == 0 ? 0 : Double(roundsCaught) / Double(roundsRun) }
    /// The per-round catch rate's one-sided 95% lower confidence bound (Clopper–Pearson).
    public var catchRateLowerBound: Double { Self.lowerBound(successes: roundsCaught, trials: roundsRun) }
    /// The probability that one run of the case misses the race, at the lower bound.
    public var missPerRun: Double { pow(1 - catchRateLowerBound, Double(torture.rounds ?? 1)) }
    /// The rounds a run needs to miss the race with probability under `probability`, at the lower bound.
    public func roundsNeeded(missBelow probability: Double) -> Int {
        let lower = catchRateLowerBound
        guard lower > 0 else { return .max }
        guard lower < 1 else { return 1 }
        return Int((log(probability) / log(1 - lower)).rounded(.up))
    }

    /// "cancel-after-subscribe on bad-x: caught 280 of 300 rounds (93.3%, ≥ 90.5% at 95%
    /// confidence); a run of 300 rounds misses it with probability ≤ 1e-300".
    public var description: String {
        let percent = { (x: Double) in String(format: "%.1f%%", x * 100) }
        return
            "\(torture.rawValue) on \(design): caught \(roundsCaught) of \(roundsRun) rounds in \(runs) run\(runs == 1 ? "" : "s") "
            + "(\(percent(catchRate)), ≥ \(percent(catchRateLowerBound)) at 95% confidence); "
            + "a run of \(torture.rounds ?? 1) round\(torture.rounds == 1 ? "" : "s") misses it with probability ≤ "
            + Self.probability(missPerRun)
    }

    /// A probability for a message: "0.3%", "2e-7"; "1e-300" for anything smaller (the figure is a bound).
    static func probability(_ p: Double) -> String {
        if p >= 0.001 { return String(format: "%.1f%%", p * 100) }
        if p < 1e-300 { return "1e-300" }
        return String(format: "%.0e", p)
    }

    /// The one-sided lower confidence bound of a binomial proportion (Clopper–Pearson): the
    /// rate `p` at which `successes` or more of `trials` has probability `alpha`.
    static func lowerBound(successes: Int, trials: Int, alpha: Double = 0.05) -> Double {
        guard successes > 0, trials > 0 else { return 0 }
        if successes == trials { return pow(alpha, 1 / Double(trials)) }
        // P(X ≥ successes | p) rises with p: bisect for alpha.
        func tail(_ p: Double) -> Double {
            let n = Double(trials)
            return (successes...trials).reduce(0) { sum, k in
                let k = Double(k)
                let logTerm = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k * log(p) + (n - k) * log1p(-p)
                return sum + exp(logTerm)
            }
        }
        var (low, high) = (0.0, Double(successes) / Double(trials))
        for _ in 0..<60 {
            let mid = (low + high) / 2
            if tail(mid) < alpha { low = mid } else { high = mid }
        }
        return low
    }
}

extension TortureCase {
    /// Measures how often one round of this stochastic case catches what `design` breaks: runs
    /// the case `runs` times in this process, each of every round, and tallies the rounds that
    /// caught a violation. For the kit's own tests, and for a design author who wants to know
    /// how hard the kit looks for a race they have: measure it on a design that has the race.
    public func power(on design: SteppingDesign, runs: Int) -> TorturePower {
        precondition(isStochastic, "\(rawValue) is not stochastic: one run shows what it checks")
        var (run, caught) = (0, 0)
        for _ in 0..<runs {
            let progress = TortureProgress(label: "\(design) \(rawValue)", measuring: true)
            _ = self.run(design, progress)
            run += progress.roundsRun
            caught += progress.roundsCaught
        }
        return TorturePower(torture: self, design: design.name, runs: runs, roundsRun: run, roundsCaught: caught)
    }
}
