@preconcurrency import OpenCombine
import TestSupport
import Testing

@testable import Stepping

/// The pure state machine, exhaustively: every state × every signal, against a written table.
@Suite("StepStateMachine: every state × signal")
struct StepStateMachineTests {
    final class StepperToken {}

    enum StartState: String, CaseIterable, Sendable {
        case subscribing, subscribedIdle, subscribedAwaitingPromise, stepping, steppingMoreRequested
        case steppingWithCompletion, dead
    }

    enum Signal: String, CaseIterable, Sendable {
        case subscription, input, stepperReturned
        case currentPromiseMore, currentPromiseCancel, stalePromiseMore, stalePromiseCancel
        case completion, cancel
    }

    let first = RecordingSubscription(name: "first")
    let second = RecordingSubscription(name: "second")
    let stepper = StepperToken()

    /// Drives a fresh machine into `start` through its public signals only.
    func machine(in start: StartState) -> StepStateMachine {
        var m = StepStateMachine(stepper: stepper)
        switch start {
        case .subscribing: break
        case .subscribedIdle: _ = m.receiveSubscription(first)
        case .subscribedAwaitingPromise:
            _ = m.receiveSubscription(first); _ = m.receiveInput(); _ = m.stepperReturned()
        case .stepping: _ = m.receiveSubscription(first); _ = m.receiveInput()
        case .steppingMoreRequested:
            _ = m.receiveSubscription(first); _ = m.receiveInput(); _ = m.completePromise(id: 1, request: .more)
        case .steppingWithCompletion:
            _ = m.receiveSubscription(first); _ = m.receiveInput(); _ = m.receiveCompletion(.finished)
        case .dead: _ = m.cancel()
        }
        return m
    }

    func name(_ s: AnyObject) -> String {
        s === first ? "first" : s === second ? "second" : s === stepper ? "stepper" : "?"
    }

    func describe(_ m: StepStateMachine) -> String {
        switch m.state {
        case .subscribing(let s): "subscribing(\(name(s)))"
        case .subscribed(let x): "subscribed(\(name(x.subscription as AnyObject)), valid: \(x.validPromiseID))"
        case .stepping(let x, let more, let completion):
            "stepping(\(name(x.subscription as AnyObject)), valid: \(x.validPromiseID), more: \(more)\(completion == nil ? "" : ", completion"))"
        case .dead: "dead"
        }
    }

    /// Applies `signal`; returns the action taken, as text.
    func apply(_ signal: Signal, to m: inout StepStateMachine) -> String {
        let current = m.nextPromiseID - 1 == 0 ? 1 : m.nextPromiseID - 1
        let stale: StepStateMachine.PromiseID = 12_345
        func promise(_ a: StepStateMachine.CompletePromiseAction) -> String {
            switch a {
            case .none: "none"
            case .request(let s): "request(\(name(s as AnyObject)))"
            case .cancel(let s): "cancel(\(name(s.subscription as AnyObject)))"
            case .release: "release"
            }
        }
        switch signal {
        case .subscription:
            switch m.receiveSubscription(second) {
            case .requestFirst(let s): return "requestFirst(\(name(s as AnyObject)))"
            case .cancel(let s): return "cancel(\(name(s as AnyObject)))"
            }
        case .input:
            switch m.receiveInput() {
            case .callStepper(let s, let id): return "callStepper(\(name(s)), promise: \(id))"
            case .ignore: return "ignore"
            }
        case .stepperReturned:
            switch m.stepperReturned() {
            case .demand(let d): return "demand(\(d))"
            case .deliverCompletion(let e, let s):
                return "deliverCompletion(\(e.typed(as: TestError.self)), \(name(s.stepper)))"
            }
        case .currentPromiseMore: return promise(m.completePromise(id: current, request: .more))
        case .currentPromiseCancel: return promise(m.completePromise(id: current, request: .cancel))
        case .stalePromiseMore: return promise(m.completePromise(id: stale, request: .more))
        case .stalePromiseCancel: return promise(m.completePromise(id: stale, request: .cancel))
        case .completion:
            switch m.receiveCompletion(.finished) {
            case .callStepper(let s): return "callStepper(\(name(s.stepper)))"
            case .deferred: return "deferred"
            case .ignore: return "ignore"
            }
        case .cancel:
            switch m.cancel() {
            case .none: return "none"
            case .cancel(let s): return "cancel(\(name(s.subscription as AnyObject)))"
            case .release: return "release"
            }
        }
    }

    /// The specification: (action, next state) for every state × signal.
    static let table: [StartState: [Signal: (String, String)]] = {
        let same = "unchanged"
        return [
            .subscribing: [
                .subscription: ("requestFirst(second)", "subscribed(second, valid: 0)"),
                .input: ("ignore", same), .stepperReturned: ("demand(max(0))", same),
                .currentPromiseMore: ("none", same), .currentPromiseCancel: ("none", same),
                .stalePromiseMore: ("none", same), .stalePromiseCancel: ("none", same),
                .completion: ("ignore", same), .cancel: ("release", "dead"),
            ],
            .subscribedIdle: [
                .subscription: ("cancel(second)", same),
                .input: ("callStepper(stepper, promise: 1)", "stepping(first, valid: 1, more: false)"),
                .stepperReturned: ("demand(max(0))", same),
                .currentPromiseMore: ("none", same), .currentPromiseCancel: ("none", same),
                .stalePromiseMore: ("none", same), .stalePromiseCancel: ("none", same),
                .completion: ("callStepper(stepper)", "dead"), .cancel: ("cancel(first)", "dead"),
            ],
            .subscribedAwaitingPromise: [
                .subscription: ("cancel(second)", same),
                .input: ("ignore", same),  // no demand outstanding: an upstream that ignores demand
                .stepperReturned: ("demand(max(0))", same),
                .currentPromiseMore: ("request(first)", "subscribed(first, valid: 0)"),
                .currentPromiseCancel: ("cancel(first)", "dead"),
                .stalePromiseMore: ("none", same), .stalePromiseCancel: ("none", same),
                .completion: ("callStepper(stepper)", "dead"), .cancel: ("cancel(first)", "dead"),
            ],
            .stepping: [
                .subscription: ("cancel(second)", same),
                .input: ("ignore", same),
                .stepperReturned: ("demand(max(0))", "subscribed(first, valid: 1)"),
                .currentPromiseMore: ("none", "stepping(first, valid: 0, more: true)"),
                .currentPromiseCancel: ("cancel(first)", "dead"),
                .stalePromiseMore: ("none", same), .stalePromiseCancel: ("none", same),
                .completion: ("deferred", "stepping(first, valid: 1, more: false, completion)"),
                .cancel: ("cancel(first)", "dead"),
            ],
            .steppingMoreRequested: [
                .subscription: ("cancel(second)", same),
                .input: ("ignore", same),
                .stepperReturned: ("demand(max(1))", "subscribed(first, valid: 0)"),
                .currentPromiseMore: ("none", same), .currentPromiseCancel: ("none", same),
                .stalePromiseMore: ("none", same), .stalePromiseCancel: ("none", same),
                .completion: ("deferred", "stepping(first, valid: 0, more: true, completion)"),
                .cancel: ("cancel(first)", "dead"),
            ],
            .steppingWithCompletion: [
                .subscription: ("cancel(second)", same),
                .input: ("ignore", same),
                .stepperReturned: ("deliverCompletion(finished, stepper)", "dead"),
                .currentPromiseMore: ("none", "stepping(first, valid: 0, more: true, completion)"),
                .currentPromiseCancel: ("release", "dead"),  // upstream has completed: nothing goes upstream
                .stalePromiseMore: ("none", same), .stalePromiseCancel: ("none", same),
                .completion: ("ignore", same), .cancel: ("release", "dead"),
            ],
            .dead: [
                .subscription: ("cancel(second)", same),
                .input: ("ignore", same), .stepperReturned: ("demand(max(0))", same),
                .currentPromiseMore: ("none", same), .currentPromiseCancel: ("none", same),
                .stalePromiseMore: ("none", same), .stalePromiseCancel: ("none", same),
                .completion: ("ignore", same), .cancel: ("none", same),
            ],
        ]
    }()

    @Test("every signal in every state does what the table says", arguments: StartState.allCases)
    func test_stateMachine_everyStateTimesSignal(start: StartState) throws {
        let row = try #require(Self.table[start])
        #expect(Set(row.keys) == Set(Signal.allCases), "the table must cover every signal")
        for signal in Signal.allCases {
            var m = machine(in: start)
            let before = describe(m)
            let action = apply(signal, to: &m)
            let (expectedAction, expectedState) = try #require(row[signal])
            let after = describe(m)
            #expect(action == expectedAction, "\(start) × \(signal): action")
            #expect(
                after == (expectedState == "unchanged" ? before : expectedState), "\(start) × \(signal): next state")
        }
    }

    @Test("dead releases the stepper and subscription")
    func test_rule_R1_deadHoldsNothing() {
        weak var weakStepper: StepperToken?
        weak var weakSubscription: RecordingSubscription?
        var m: StepStateMachine
        do {
            let token = StepperToken()
            let sub = RecordingSubscription()
            weakStepper = token
            weakSubscription = sub
            m = StepStateMachine(stepper: token)
            _ = m.receiveSubscription(sub)
            _ = m.receiveInput()
            _ = m.cancel()
        }
        #expect(weakStepper == nil)
        #expect(weakSubscription == nil)
        #expect(m.isDead)
    }

    @Test("promise ids are fresh for every input and never the no-promise id")
    func test_rule_S3_promiseIdsAreUnique() {
        var m = StepStateMachine(stepper: stepper)
        _ = m.receiveSubscription(first)
        var seen = Set<StepStateMachine.PromiseID>()
        for _ in 0..<1_000 {
            guard case .callStepper(_, let id) = m.receiveInput() else { Issue.record("no stepper call"); return }
            #expect(id != StepStateMachine.noPromiseID)
            #expect(seen.insert(id).inserted)
            _ = m.completePromise(id: id, request: .more)
            _ = m.stepperReturned()
        }
    }
}
