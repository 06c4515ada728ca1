import Foundation
@preconcurrency import OpenCombine
@_spi(StepBench) import SteppingConformance
import TestSupport
import Testing

@_spi(Measurement) @testable import Stepping

/// The oracle: `StepStateMachine` driven by a direct interpreter of a script, recording the
/// calls every design must make.
extension ModelBasedTests {
    static func oracle(_ script: Script) -> [String] {
        final class Token {}
        let first = RecordingSubscription(name: "first"), second = RecordingSubscription(name: "second")
        func name(_ s: any Subscription) -> String { (s as AnyObject) === first ? "first" : "second" }
        var m = StepStateMachine(stepper: Token())
        var log: [String] = []
        var ids: [StepStateMachine.PromiseID] = []
        var value = 0

        func perform(_ a: StepStateMachine.CompletePromiseAction) {
            switch a {
            case .none: break
            case .request(let s): log.append("request(\(name(s)), max(1))")
            case .cancel(let s): log.append("cancel(\(name(s.subscription)))")
            case .release: break
            }
        }
        func cancel() {
            if case .cancel(let s) = m.cancel() { log.append("cancel(\(name(s.subscription)))") }
        }
        for op in script.ops {
            switch op {
            case .subscribe(let isSecond):
                switch m.receiveSubscription(isSecond ? second : first) {
                case .requestFirst(let s): log.append("request(\(name(s)), max(1))")
                case .cancel(let s): log.append("cancel(\(name(s)))")
                }
            case .input:
                let v = value
                value += 1
                guard case .callStepper(_, let id) = m.receiveInput() else { continue }
                log.append("stepper(input \(v))")
                ids.append(id)
                let n = ids.count - 1
                switch script.reactions[v] {
                case .nothing: break
                case .more: perform(m.completePromise(id: ids[n], request: .more))
                case .cancel: perform(m.completePromise(id: ids[n], request: .cancel))
                case .moreTwice:
                    perform(m.completePromise(id: ids[n], request: .more))
                    perform(m.completePromise(id: ids[n], request: .more))
                case .moreThenCancel:
                    perform(m.completePromise(id: ids[n], request: .more))
                    perform(m.completePromise(id: ids[n], request: .cancel))
                case .staleMore:
                    if n > 0 { perform(m.completePromise(id: ids[n - 1], request: .more)) }
                case .cancelSubscriber: cancel()
                case .completeUpstream: _ = m.receiveCompletion(.finished)
                case .completeThenMore:
                    _ = m.receiveCompletion(.finished)
                    perform(m.completePromise(id: ids[n], request: .more))
                case .completeThenCancel:
                    _ = m.receiveCompletion(.finished)
                    perform(m.completePromise(id: ids[n], request: .cancel))
                case .completeThenCancelSubscriber:
                    _ = m.receiveCompletion(.finished)
                    cancel()
                }
                switch m.stepperReturned() {
                case .demand(let d): if d == .max(1) { log.append("returned(max(1))") }
                case .deliverCompletion: log.append("stepper(finished)")
                }
            case .finish, .fail:
                if case .callStepper = m.receiveCompletion(op.isFinish ? .finished : .failure(TestError())) {
                    log.append(op.isFinish ? "stepper(finished)" : "stepper(failure)")
                }
            case .cancel: cancel()
            case .promise(let raw, let request):
                guard let i = pick(raw, count: ids.count) else { continue }
                perform(m.completePromise(id: ids[i], request: request))
            }
        }
        return log
    }
}
