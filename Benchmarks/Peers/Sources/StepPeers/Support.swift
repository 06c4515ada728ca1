@preconcurrency import OpenCombine
import Stepping
import Synchronization

/// A value that crosses into a task or a channel whose element must be `Sendable`. Sound here
/// because each value is handed over once and used by one side at a time (the stepper contract
/// calls the stepper with one input at a time); a user with non-`Sendable` elements writes the
/// same box.
struct Handed<Value>: @unchecked Sendable {
    let value: Value
}

/// Upstream's inputs through OpenCombine's `.values`, subscribed now — as `step` returns, as a
/// subscriber design is, so that what a subject sends after it is not lost — for one task to
/// iterate (`var inputs = values.value; while let input = try await inputs.next() { … }`). The
/// publisher crosses type-erased: a task may not capture a generic publisher's metatype, and
/// `AnyPublisher` erases the subscription only: inputs reach `.values`' subscriber directly.
func subscribedValues<Upstream: Publisher>(
    _ upstream: Upstream
) -> Handed<AsyncThrowingPublisher<AnyPublisher<Upstream.Output, Upstream.Failure>>.Iterator> {
    Handed(value: upstream.eraseToAnyPublisher().values.makeAsyncIterator())
}

/// How far two builds' instruction counts of a peer may lie apart and still be the same code
/// (``SteppingDesign/Traits/instructionTolerance``; the gate's own is 0.5%). The peers' counts
/// move with where the binary's code and heap lie: their sync-step instructions per element
/// across five profiles of four commits on 27 Nov 2026 spread by 1.6%
/// (`combine-values` 21,173–21,519), 1.3% (`flatmap-future`), 1.0% (`async-channel`) and 1.1%
/// (`mpsc-channel`), where `seed`, `locked`, `mutex`, `atomic` and `actor` moved by less than
/// 0.01% (`actor-stream`, with its own 5%, by 0.1%); their path counts, between a build here and
/// one in a fresh clone, by up to 0.5% (`flatmap-future`'s `cancel-unsubscribed`).
let peerInstructionTolerance = 0.03

/// Known issues the loop-on-a-task peers share: what a `for await` loop over a publisher does
/// to the stepper contract (each is a rule the conformance kit shows broken).
enum LoopIssues {
    /// The loop sees upstream's completion only when it asks for the next input, after the
    /// open promise is fulfilled: a stepper that never fulfils it never hears the end.
    static let completionWaits: [SteppingDesign.Traits.KnownIssue] = [
        .init(
            .c1, "the completion reaches the stepper only after the open promise is fulfilled (the loop's next next())"),
        .init(.c2, "the completion waits for the open promise (C1), so the check's completion handler does not run"),
        .init(.c6, "a completion sent from inside the stepper waits for its promise (C1)"),
        .init(.r1, "the task holds the stepper until the loop ends, which waits for the open promise"),
        .init(.r3, "the stepper is released when the task ends, which waits for the open promise (R1)"),
    ]
    /// `cancel()` cancels the task, which a task waiting on the open promise does not see.
    static let cancelWaits: [SteppingDesign.Traits.KnownIssue] = [
        .init(
            .c4, "cancel() cancels the task; one waiting on the open promise does not cancel upstream until it resumes"),
        .init(.s4, "promise(.cancel) ends the loop, and leaving the loop does not cancel the subscription"),
    ]
    /// What an upstream that breaks the demand contract does to the loop.
    static let trustsUpstream: [SteppingDesign.Traits.KnownIssue] = [
        .init(
            .s1,
            "an input sent without demand traps in OpenCombine's .values (\"Received an output without requesting demand\")"
        ),
        .init(.c5, "inputs and completions before the subscription or after the end are not ignored"),
    ]
    /// The channel peers hand each input between two tasks: S5's million inputs near its limit.
    static let twoTasksSlow = SteppingDesign.Traits.KnownIssue(
        .s5, "a million inputs through two tasks take about 5 s here: over a short --stall-limit",
        isIntermittent: true)
    /// The cooperative pool has as many threads as cores: steppers that block hold them all.
    static let poolWidth = SteppingDesign.Traits.KnownIssue(
        .r4,
        "steppers run on the cooperative pool (a thread per core): blocked steppers hold every thread and the others wait"
    )
}

/// The promise a bridge hands the stepper with each input (a value promise: no allocation), and
/// its answer. A bridge waits only when the contract forces it: it reads the answer as the
/// stepper returns, and only a promise still open then gets a waiter (``answer(orWait:)``), which
/// the fulfilment resumes. Only the first fulfilment of the latest promise counts: repeated and
/// stale ones are ignored (rules S2, S3). One per subscription, reused for every input.
final class OpenPromise: StepPromiseTarget {
    private struct State {
        /// The id of the latest promise handed to the stepper.
        var id: StepPromiseID = 0
        /// Its answer, once fulfilled.
        var answer: StepRequest?
        /// Who waits for it, when it was still open as the stepper returned (an existential, not
        /// a generic parameter: the promise's fulfilment reaches this class through a protocol,
        /// and a generic class's state would be looked up at run time on every call).
        var waiter: (any PromiseWaiter)?
        /// Whether an answer was `.cancel`: the stepper hears nothing more.
        var cancelled = false
    }
    private let state = Mutex(State())

    /// The next input's promise: the previous one is stale from now on.
    func next() -> StepPromise {
        let id = state.withLock {
            $0.id &+= 1
            $0.answer = nil
            return $0.id
        }
        return StepPromise(target: self, id: id)
    }

    /// The latest promise's answer, if it was fulfilled.
    var answer: StepRequest? { state.withLock { $0.answer } }

    /// The latest promise's answer, if it was fulfilled; else nil, and `waiter` gets the answer.
    func answer(orWait waiter: some PromiseWaiter) -> StepRequest? {
        state.withLock {
            if $0.answer == nil { $0.waiter = waiter }
            return $0.answer
        }
    }

    /// Whether the stepper answered `.cancel`.
    var cancelled: Bool { state.withLock { $0.cancelled } }

    func completePromise(id: StepPromiseID, request: StepRequest) {
        let waiter = state.withLock { state -> (any PromiseWaiter)? in
            guard state.id == id, state.answer == nil else { return nil }  // stale or repeated
            state.answer = request
            if request == .cancel { state.cancelled = true }
            return state.waiter.take()
        }
        waiter?.answered(request)
    }
}

/// What waits for an open promise's answer (``OpenPromise``).
protocol PromiseWaiter: Sendable {
    /// Called once, with the answer, on the thread that fulfilled the promise.
    func answered(_ request: StepRequest)
}

extension CheckedContinuation: PromiseWaiter where T == StepRequest, E == Never {
    func answered(_ request: StepRequest) { resume(returning: request) }
}

extension OpenPromise {
    /// The bridge from the stepper contract to a loop on a task: calls `stepper` with `input` and
    /// the next promise, and returns its answer — at once when it was fulfilled during the call
    /// (every input of a synchronous stepper: no suspension, as the loop a user writes around
    /// synchronous work, `for await x in p.values { work(x) }`, has none), else once it is.
    @inline(__always)
    func step<Input, Failure: Error>(
        _ stepper: @Sendable (StepEvent<Input, Failure>) -> Void, _ input: Input
    ) async -> StepRequest {
        stepper(.input(input, next()))
        if let answer { return answer }
        return await waitForAnswer()
    }

    /// Suspends until the latest promise is answered (it was still open as the stepper returned).
    private func waitForAnswer() async -> StepRequest {
        await withCheckedContinuation { waiter in
            if let answer = answer(orWait: waiter) { waiter.resume(returning: answer) }
        }
    }
}
