import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
import Synchronization

/// The hostile cases. Each returns the violations it saw (empty: the design held). The kit runs
/// them as checks (``Conformance/checks``); `SteppingTorture` runs one per child process.
public enum TortureCase: String, CaseIterable, Sendable {
    /// 64 threads fulfil the latest promise, call stale promises and cancel, against an upstream
    /// that delivers on its own queue (S1–S3, C4).
    case storm64 = "storm-64"
    /// `request` is slow and delivers the next input from another thread; every promise is
    /// fulfilled on a fresh thread, so many `request` calls are in flight at once (R4).
    case slowRequest = "slow-request"
    /// `request` delivers the next input re-entrantly, from inside `request` (S1, order).
    case reentrantRequest = "reentrant-request"
    /// `cancel()` is called from inside `request` (C4, no deadlock).
    case cancelInsideRequest = "cancel-inside-request"
    /// `publisher.step { … }.cancel()` right after subscribing, many times (C7: no request after
    /// cancel returned).
    case cancelAfterSubscribe = "cancel-after-subscribe"
    /// Something only the stepper owns calls the promise and `cancel()` from its `deinit`, when
    /// the subscriber lets the stepper go after cancel, promise(.cancel) and completion (R3).
    case releaseCallback = "release-callback"
    /// The stepper completes the `PassthroughSubject` it is subscribed to, from inside its call
    /// (C6), with and without a `.more` in the same call.
    case reentrantCompletion = "reentrant-completion"
    /// An upstream that ignores demand: inputs with no demand outstanding (S1, C5).
    case demandIgnoring = "demand-ignoring"
    /// An upstream that completes twice, and sends after completing (C1, C5).
    case doubleCompletion = "double-completion"

    /// The rule the case is about (it checks others on the way).
    public var rule: SteppingRule {
        switch self {
        case .storm64, .cancelInsideRequest: .c4
        case .slowRequest: .r4
        case .reentrantRequest: .s5
        case .cancelAfterSubscribe: .c7
        case .releaseCallback: .r3
        case .reentrantCompletion: .c6
        case .demandIgnoring: .s1
        case .doubleCompletion: .c1
        }
    }

    /// Whether the case is stochastic: what it looks for is a lost race, so a design that has
    /// the fault can pass a run of it. Each runs ``rounds`` independent rounds (a fresh
    /// subscriber each) and stops at the first that catches a violation; ``power(on:runs:)``
    /// measures how often one round catches the fault (docs/CONFORMANCE.md, "Stochastic
    /// checks"). The other cases race threads too, but what they look for (a deadlock, a stall,
    /// a lost or reordered input, a count) shows on every run of a design that has it.
    public var isStochastic: Bool { rounds != nil }

    /// A stochastic case's rounds per run (nil for the others, which run a fixed sequence).
    public var rounds: Int? {
        switch self {
        case .storm64: 10
        case .cancelAfterSubscribe: 500
        default: nil
        }
    }

    /// Whether the case draws random choices from its seed (``TortureProgress/seed``): a failure
    /// names the seed that replays them. The other cases' schedule is their round number.
    public var drawsFromSeed: Bool { self == .storm64 }

    /// What the case does, in a line.
    public var summary: String {
        switch self {
        case .storm64: "64 threads fulfil the latest promise, call stale ones and cancel (S1–S3, C4)"
        case .slowRequest: "a slow request that delivers from another thread; promises on fresh threads (R4)"
        case .reentrantRequest: "request delivers the next input re-entrantly (S1, S5)"
        case .cancelInsideRequest: "cancel() from inside request (C4, no deadlock)"
        case .cancelAfterSubscribe: "cancel right after subscribing: no request after cancel returned (C7)"
        case .releaseCallback: "the stepper's deinit calls the promise and cancel() (R3)"
        case .reentrantCompletion: "the stepper completes its own subject, with and without .more (C6)"
        case .demandIgnoring: "an upstream that ignores demand (S1, C5)"
        case .doubleCompletion: "an upstream that completes twice and sends after completing (C1, C5)"
        }
    }

    /// Runs the case on `design`; returns the violations seen (empty: the design held). A
    /// stochastic case's violations begin with the round that caught them (and, for a case that
    /// draws from its seed, the seed that replays its choices).
    public func run(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
        let violations = runRounds(design, progress)
        guard isStochastic, !violations.isEmpty, !progress.measuring else { return violations }
        let round = "caught in round \(progress.round.load(ordering: .relaxed) + 1) of \(progress.rounds(of: self))"
        guard drawsFromSeed else {
            return ["\(round) (each round's schedule is its number: no random choice)"] + violations
        }
        return [
            "\(round) with seed \(progress.seed) (replay: the torture child's arguments \(rawValue) \(design) SECONDS "
                + "\(progress.seed), or TortureProgress(label:seed:))"
        ] + violations
    }

    private func runRounds(_ design: SteppingDesign, _ progress: TortureProgress) -> [String] {
        switch self {
        case .storm64: runStorm(design, progress)
        case .slowRequest: runSlowRequest(design, progress)
        case .reentrantRequest: runReentrantRequest(design, progress)
        case .cancelInsideRequest: runCancelInsideRequest(design, progress)
        case .cancelAfterSubscribe: runCancelAfterSubscribe(design, progress)
        case .releaseCallback: runReleaseCallback(design, progress)
        case .reentrantCompletion: runReentrantCompletion(design, progress)
        case .demandIgnoring: runDemandIgnoring(design, progress)
        case .doubleCompletion: runDoubleCompletion(design, progress)
        }
    }
}

// The cases: TortureCase+Demand.swift, TortureCase+Cancel.swift, TortureCase+Lifetime.swift.

/// Sends `value` as a well-behaved upstream would: demand returned from `receive(_:)` (a
/// `.more` that came while the stepper was still running) counts like a request.
func deliver(
    _ value: Int, to subscriber: any SteppingSubscriber<Int, TestError>, from upstream: HookedSubscription
) {
    if subscriber.receive(value) != .none { upstream.request(.max(1)) }
}
