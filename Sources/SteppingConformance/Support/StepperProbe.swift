import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
import Synchronization

/// A stepper that records what it is given and checks rule S1 as it goes: never two calls at
/// once, never a second input while the previous promise is unfulfilled, nothing after the
/// completion. `reaction` runs inside the stepper call (to fulfil the promise synchronously).
package final class StepperProbe<Input: Sendable & Equatable>: @unchecked Sendable {  // state behind `lock`
    package enum Event: Equatable, CustomStringConvertible {
        case input(Input)
        case finished
        case failure(TestError)
        package var description: String {
            switch self {
            case .input(let i): "input(\(i))"
            case .finished: "finished"
            case .failure(let e): "failure(\(e.code))"
            }
        }
    }

    /// Runs inside the stepper for each input; fulfil promises through `probe.fulfil`.
    package typealias Reaction = @Sendable (_ probe: StepperProbe, _ index: Int, _ input: Input) -> Void

    private let lock = NSLock()
    private var _events: [Event] = []
    /// The completions among `_events`, counted as they come: checks poll ``completions`` every
    /// 100 µs while a stream runs, and a count read under the lock is O(1), where filtering a copy
    /// of the events was O(n) per poll and made each next append copy the whole array (the copy
    /// still alive): on a loaded machine that poller slowed a 5,000-input S1 check past its
    /// stall limit.
    private var _completions = 0
    private var _promises: [StepPromise] = []
    private var _violations: [String] = []
    private var _reaction: Reaction?
    private var _onCompletion: (@Sendable () -> Void)?
    /// Whether the promise of the latest input was fulfilled with `.more` (first call only).
    private var _latestFulfilled = true
    private var _completed = false
    private let active = Atomic<Int>(0)
    /// Lets R1 tests watch the stepper being released: the stepper closure retains it.
    package let token = Token()
    package final class Token: Sendable {}

    package init(reaction: Reaction? = nil) { _reaction = reaction }

    package var reaction: Reaction? {
        get { lock.withLock { _reaction } }
        set { lock.withLock { _reaction = newValue } }
    }
    package var onCompletion: (@Sendable () -> Void)? {
        get { lock.withLock { _onCompletion } }
        set { lock.withLock { _onCompletion = newValue } }
    }
    package var events: [Event] { lock.withLock { _events } }
    package var inputs: [Input] { events.compactMap { if case .input(let i) = $0 { i } else { nil } } }
    package var completions: Int { lock.withLock { _completions } }
    package var promises: [StepPromise] { lock.withLock { _promises } }
    package var violations: [String] { lock.withLock { _violations } }
    /// The promise handed over with input number `index` (0-based).
    package func promise(_ index: Int) -> StepPromise { lock.withLock { _promises[index] } }
    package var latestPromise: StepPromise? { lock.withLock { _promises.last } }

    /// The stepper to pass to a subscriber.
    package func stepper<Failure: Error>(_ failure: Failure.Type = TestError.self)
        -> @Sendable (StepEvent<Input, Failure>) -> Void
    {
        let token = self.token
        return { [self] event in
            _ = token
            self.handle(event)
        }
    }

    private func handle<Failure: Error>(_ event: StepEvent<Input, Failure>) {
        if active.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
            violate("S1: two stepper calls at once")
        }
        defer { active.subtract(1, ordering: .sequentiallyConsistent) }
        switch event {
        case .input(let input, let promise):
            let (index, reaction) = lock.withLock { () -> (Int, Reaction?) in
                if _completed { _violations.append("stepper called with input \(input) after completion") }
                if !_latestFulfilled {
                    _violations.append("S1: input \(input) arrived while the previous promise was unfulfilled")
                }
                _latestFulfilled = false
                _events.append(.input(input))
                let index = _promises.count
                _promises.append(promise)
                return (index, _reaction)
            }
            reaction?(self, index, input)
        case .completion(let completion):
            let hook = lock.withLock { () -> (@Sendable () -> Void)? in
                if _completed { _violations.append("C1: completion delivered twice") }
                _completed = true
                _completions += 1
                switch completion {
                case .finished: _events.append(.finished)
                case .failure(let error): _events.append(.failure(error as? TestError ?? TestError(code: -1)))
                }
                return _onCompletion
            }
            hook?()
        }
    }

    /// Fulfils promise `index` and notes it, so the S1 check knows the latest promise said
    /// `.more`. Tests fulfil promises only through here. A promise the stepper never got (a
    /// design that did not deliver input `index`) is not there to fulfil: the check's own
    /// expectations on the inputs show it.
    package func fulfil(_ index: Int, _ request: StepRequest) {
        let promise = lock.withLock { () -> StepPromise? in
            guard index < _promises.count else { return nil }
            if request == .more && index == _promises.count - 1 { _latestFulfilled = true }
            return _promises[index]
        }
        promise?(request)
    }

    package func fulfilLatest(_ request: StepRequest) {
        fulfil(lock.withLock { _promises.count - 1 }, request)
    }

    private func violate(_ message: String) {
        lock.withLock { _violations.append(message) }
    }
}
