import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
import Synchronization

/// A torture case's run: which round it is in (for the watchdog's message), the seed of its
/// random choices, and its tally of rounds run and rounds that caught a violation.
public final class TortureProgress: @unchecked Sendable {  // `round` and the tally are atomic; the rest immutable
    package let label: String
    package let round = Atomic<Int>(0)
    /// The seed of the case's random choices (which stale promise a storm-64 thread calls): its
    /// failure names it, and a run with the same seed makes the same choices (the threads'
    /// interleaving stays the machine's).
    public let seed: UInt64
    /// Whether the case runs every round, counting those that catch a violation, instead of
    /// stopping at the first: how ``TortureCase/power(on:runs:)`` measures a catch rate.
    public let measuring: Bool
    /// At most this many rounds of a stochastic case (nil: the case's ``TortureCase/rounds``).
    public let roundLimit: Int?
    private let run = Atomic<Int>(0)
    private let caught = Atomic<Int>(0)
    private let violationsSoFar = Atomic<Int>(0)

    /// Progress of the case named `label` (design and case), its random choices drawn from `seed`.
    public init(
        label: String, seed: UInt64 = .random(in: .min ... .max), measuring: Bool = false, roundLimit: Int? = nil
    ) {
        precondition(roundLimit.map { $0 > 0 } ?? true, "a round limit must be positive")
        self.label = label
        self.seed = seed
        self.measuring = measuring
        self.roundLimit = roundLimit
    }

    /// The rounds this run of the stochastic case `torture` runs (at most ``roundLimit``).
    package func rounds(of torture: TortureCase) -> Int { min(torture.rounds ?? 1, roundLimit ?? .max) }

    /// Rounds the case has ended.
    public var roundsRun: Int { run.load(ordering: .relaxed) }
    /// Rounds that added a violation.
    public var roundsCaught: Int { caught.load(ordering: .relaxed) }

    /// Ends a round, the case's violations now numbering `violations` (every round's): counts it,
    /// caught if it added one, and says whether the case stops here (it caught one and is not
    /// measuring).
    package func endRound(violations: Int) -> Bool {
        let added = violations > violationsSoFar.exchange(violations, ordering: .relaxed)
        run.add(1, ordering: .relaxed)
        if added { caught.add(1, ordering: .relaxed) }
        return added && !measuring
    }

    /// A generator for one thread of round `round`: the same seed, round and thread make the same choices.
    package func generator(round: Int, thread: Int = 0) -> SplitMix64 {
        SplitMix64(seed: seed ^ (UInt64(round) << 32) ^ UInt64(thread) &* 0x9E37_79B9)
    }

    /// Exits with status 3, naming design, case and round, if the case runs past `seconds`.
    public func startWatchdog(seconds: Double) {
        let thread = Thread { [self] in
            Thread.sleep(forTimeInterval: seconds)
            FileHandle.standardOutput.write(
                Data(
                    "WATCHDOG: \(label) still running after \(seconds) s in round \(round.load(ordering: .relaxed)) (deadlock or stall)\n"
                        .utf8))
            exit(3)
        }
        thread.start()
    }
}

/// A stepper that checks rule S1 and C1 as it goes: never two calls at once, never an input while
/// the previous promise is unfulfilled, exactly one completion and nothing after it.
package final class CheckingStepper: @unchecked Sendable {  // state behind `lock`; `active` atomic
    package struct State {
        package var inputs: [Int] = []
        package var promises: [StepPromise] = []
        package var completions = 0
        package var latestFulfilled = true
        package var violations: [String] = []
    }
    package let state = Box(State())
    private let active = Atomic<Int>(0)
    /// Runs inside the stepper call for each input (this stepper, the input's index); fulfil
    /// promises through ``fulfil(_:_:)`` so that the S1 check knows.
    package let reaction: @Sendable (CheckingStepper, Int) -> Void

    package init(reaction: @escaping @Sendable (CheckingStepper, Int) -> Void = { _, _ in }) {
        self.reaction = reaction
    }

    package func handle(_ event: StepEvent<Int, TestError>) {
        if active.add(1, ordering: .sequentiallyConsistent).newValue != 1 { violate("S1: two stepper calls at once") }
        defer { active.subtract(1, ordering: .sequentiallyConsistent) }
        switch event {
        case .input(let value, let promise):
            let index = state.mutate { s -> Int in
                if s.completions > 0 { s.violations.append("input \(value) after the completion") }
                if !s.latestFulfilled {
                    s.violations.append("S1: input \(value) while the previous promise was unfulfilled")
                }
                s.latestFulfilled = false
                s.inputs.append(value)
                s.promises.append(promise)
                return s.promises.count - 1
            }
            reaction(self, index)
        case .completion:
            state.mutate { s in
                s.completions += 1
                if s.completions > 1 { s.violations.append("C1: completion delivered \(s.completions) times") }
            }
        }
    }

    /// Fulfils promise `index` with `request`, noting a `.more` of the latest promise for S1.
    /// A promise the stepper never got is not there to fulfil (the case's checks show the
    /// missing input).
    package func fulfil(_ index: Int, _ request: StepRequest) {
        let promise = state.mutate { s -> StepPromise? in
            guard index < s.promises.count else { return nil }
            if request == .more && index == s.promises.count - 1 { s.latestFulfilled = true }
            return s.promises[index]
        }
        promise?(request)
    }

    package func violate(_ message: String) { state.mutate { $0.violations.append(message) } }
    package var stepper: @Sendable (StepEvent<Int, TestError>) -> Void { { [self] in handle($0) } }
}

/// A hand-driven upstream's subscription: counts requests and cancels, and runs hooks (outside
/// its own lock) so a case can make `request` slow, re-entrant or cancelling.
package final class HookedSubscription: Subscription, @unchecked Sendable {  // state behind `lock`
    private let lock = NSLock()
    private var _requests = 0
    private var _cancels = 0
    private var _requestsAfterCancel = 0
    package var onRequest: @Sendable () -> Void = {}
    package var onCancel: @Sendable () -> Void = {}

    package var requests: Int { lock.withLock { _requests } }
    package var cancels: Int { lock.withLock { _cancels } }

    package func request(_ demand: Subscribers.Demand) {
        lock.withLock { _requests += 1 }
        onRequest()
    }

    package func cancel() {
        lock.withLock { _cancels += 1 }
        onCancel()
    }
}

/// Starts `count` threads running `body(i)` and waits for all of them.
package func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        Thread.detachNewThread {
            body(i); group.leave()
        }
    }
    group.wait()
}
