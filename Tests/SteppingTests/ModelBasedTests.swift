import Foundation
@preconcurrency import OpenCombine
@_spi(StepBench) import SteppingConformance
import TestSupport
import Testing

@_spi(Measurement) @testable import Stepping

/// Seeded random signal sequences: every design must make the same upstream and stepper calls,
/// in the same order, as `StepStateMachine` driven by a direct interpreter (the oracle).
@Suite("Model-based: every design behaves like the state machine")
struct ModelBasedTests {
    enum Reaction: CaseIterable {
        case nothing, more, cancel, moreTwice, moreThenCancel, staleMore, cancelSubscriber
        /// Upstream completes re-entrantly, from inside the stepper call (rule C6).
        case completeUpstream, completeThenMore
        /// ... then asks to stop: nothing goes upstream and the stepper gets no completion (C6).
        case completeThenCancel, completeThenCancelSubscriber
    }
    enum Op {
        case subscribe(second: Bool)
        case input
        case finish, fail
        case cancel
        case promise(pick: Int, StepRequest)
    }

    struct Script {
        var ops: [Op] = []
        var reactions: [Reaction] = []
    }

    static func script(seed: UInt64, length: Int) -> Script {
        var rng = SplitMix64(seed: seed)
        var s = Script()
        for _ in 0..<length {
            let r = rng.next() % 100
            let op: Op =
                switch r {
                case 0..<6: .subscribe(second: rng.next() % 3 == 0)
                case 6..<50: .input
                case 50..<53: .finish
                case 53..<55: .fail
                case 55..<59: .cancel
                default: .promise(pick: Int(rng.next() % 1000), rng.next() % 6 == 0 ? .cancel : .more)
                }
            s.ops.append(op)
            s.reactions.append(Reaction.allCases[Int(rng.next() % UInt64(Reaction.allCases.count))])
        }
        // Most scripts should start subscribed, or they exercise little.
        if rng.next() % 5 != 0 { s.ops.insert(.subscribe(second: false), at: 0) }
        return s
    }

    /// Picks a promise index: usually the latest, sometimes an older (stale) one.
    static func pick(_ raw: Int, count: Int) -> Int? {
        guard count > 0 else { return nil }
        return raw % 2 == 0 ? count - 1 : raw % count
    }

    // MARK: a design under the same script

    static func run(_ design: SteppingDesign, _ script: Script) -> [String] {
        run(design.rawValue, script) { design.makeSubscriber(stepper: $0) }
    }

    typealias MakeSubscriber = (@escaping @Sendable (StepEvent<Int, TestError>) -> Void) -> any SteppingSubscriber<
        Int, TestError
    >

    /// Any stepping subscriber under `script`, named `name` in failures.
    static func run(_ name: String, _ script: Script, make: MakeSubscriber) -> [String] {
        let log = Box<[String]>([])
        let first = RecordingSubscription(name: "first"), second = RecordingSubscription(name: "second")
        for s in [first, second] {
            s.onRequest = { d in log.mutate { $0.append("request(\(s.name), \(d))") } }
            s.onCancel = { log.mutate { $0.append("cancel(\(s.name))") } }
        }
        let promises = Box<[StepPromise]>([])
        let subscriberBox = Box<(any SteppingSubscriber<Int, TestError>)?>(nil)
        let reactions = script.reactions
        let subscriber = make { event in
            switch event {
            case .input(let v, let promise):
                log.mutate { $0.append("stepper(input \(v))") }
                let n = promises.mutate {
                    $0.append(promise); return $0.count - 1
                }
                switch reactions[v] {
                case .nothing: break
                case .more: promise(.more)
                case .cancel: promise(.cancel)
                case .moreTwice: promise(.more); promise(.more)
                case .moreThenCancel: promise(.more); promise(.cancel)
                case .staleMore: if n > 0 { promises.value[n - 1](.more) }
                case .cancelSubscriber: subscriberBox.value?.cancel()
                case .completeUpstream: subscriberBox.value?.receive(completion: .finished)
                case .completeThenMore: subscriberBox.value?.receive(completion: .finished); promise(.more)
                case .completeThenCancel: subscriberBox.value?.receive(completion: .finished); promise(.cancel)
                case .completeThenCancelSubscriber:
                    subscriberBox.value?.receive(completion: .finished); subscriberBox.value?.cancel()
                }
            case .completion(.finished): log.mutate { $0.append("stepper(finished)") }
            case .completion(.failure): log.mutate { $0.append("stepper(failure)") }
            }
        }
        subscriberBox.mutate { $0 = subscriber }
        var value = 0
        for (step, op) in script.ops.enumerated() {
            guarded("\(name): model-based step \(step) (\(op))") {
                switch op {
                case .subscribe(let isSecond): subscriber.receive(subscription: isSecond ? second : first)
                case .input:
                    let demand = subscriber.receive(value)
                    value += 1
                    if demand != .none { log.mutate { $0.append("returned(\(demand))") } }
                case .finish: subscriber.receive(completion: .finished)
                case .fail: subscriber.receive(completion: .failure(TestError()))
                case .cancel: subscriber.cancel()
                case .promise(let raw, let request):
                    let all = promises.value
                    if let i = pick(raw, count: all.count) { all[i](request) }
                }
                settleDesign(subscriber)
            }
        }
        subscriberBox.mutate { $0 = nil }  // break the cycle
        return log.value
    }

    /// Asynchronous designs return no demand from `receive(_:)` but request it: compare them on
    /// demand as a whole (rule D3 is checked separately).
    static func normalised(_ log: [String], synchronous: Bool) -> [String] {
        guard !synchronous else { return log }
        // The demand goes to the accepted subscription: the one the first request went to.
        let accepted =
            log.first { $0.hasPrefix("request(") }?.dropFirst("request(".count).prefix { $0 != "," } ?? "first"
        return log.map { $0 == "returned(max(1))" ? "request(\(accepted), max(1))" : $0 }
    }

    @Test("random signal sequences: same calls as the state machine", arguments: testedDesigns)
    func test_modelBased_sameCallsAsStateMachine(design: SteppingDesign) {
        // The scripts send inputs with no demand outstanding and complete from inside the
        // stepper: the original gets both wrong.
        expecting(design, breaks: .s1, .c6) { Self.runSequences(design) }
    }

    @Test(
        "a design that subscribes itself, behind the relay, makes the same calls as the design it wraps",
        arguments: SteppingDesign.relayedDesigns)
    func test_modelBased_relayIsTransparent(design: SteppingDesign) {
        // 100 sequences: the relay settles an asynchronous strategy by waiting for 2 ms of quiet
        // after each step (400 sequences took 35 s alone, the suite's longest test).
        Self.runSequences(design.rawValue, synchronous: design.deliversSynchronously, sequences: 100) {
            design.makeSubscriber(stepper: $0)
        }
    }

    @Test("floor-step (the API with no synchronisation) makes the state machine's calls on one thread")
    func test_modelBased_floorStepIsTheStateMachineOnOneThread() {
        Self.runSequences("floor-step", synchronous: true) { FloorStep.makeSubscriber(stepper: $0) }
    }

    static func runSequences(_ design: SteppingDesign) {
        runSequences(design.rawValue, synchronous: design.deliversSynchronously) { design.makeSubscriber(stepper: $0) }
    }

    static func runSequences(_ design: String, synchronous: Bool, sequences: Int = 400, make: MakeSubscriber) {
        let base = TestSwitches.modelSeed
        var failures = 0
        for i in 0..<UInt64(sequences) {
            let seed = base &+ i
            let script = Self.script(seed: seed, length: 40)
            let expected = Self.normalised(Self.oracle(script), synchronous: synchronous)
            let actual = Self.run(design, script, make: make)
            if actual != expected {
                failures += 1
                let diff =
                    zip(expected, actual).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(expected.count, actual.count)
                Issue.record(
                    """
                    \(design) differs from the state machine for seed \(seed) \
                    (rerun with STEPBENCH_MODEL_SEED=\(seed)) at call \(diff): \
                    expected \(expected.dropFirst(diff).prefix(3)), got \(actual.dropFirst(diff).prefix(3))
                    """)
                if failures >= 3 { return }
            }
        }
    }

    @Test("the scripts exercise every kind of call")
    func test_modelBased_scriptsAreNotTrivial() {
        var kinds = Set<String>()
        for seed in 0..<UInt64(100) {
            for entry in Self.oracle(Self.script(seed: 0x5EED_0000 &+ seed, length: 40)) {
                kinds.insert(String(entry.prefix { $0 != "(" && $0 != " " }))
                if entry.hasPrefix("cancel(second)") { kinds.insert("second-cancelled") }
                if entry.hasPrefix("stepper(failure") { kinds.insert("failure") }
            }
        }
        #expect(
            kinds.isSuperset(of: ["request", "cancel", "stepper", "returned", "second-cancelled", "failure"]),
            "\(kinds)")
    }
}

extension ModelBasedTests.Op {
    var isFinish: Bool { if case .finish = self { true } else { false } }
}
