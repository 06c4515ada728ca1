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

/// Calls `stepper` with `input` and a promise, and suspends until the promise is fulfilled: the
/// bridge from the stepper contract to a `for await` loop. One allocation for the promise's
/// one-shot slot (a checked continuation may be resumed once; repeated and stale fulfilments
/// must be ignored, rules S2 and S3).
func stepAndWait<Input, Failure: Error>(
    _ stepper: @Sendable (StepEvent<Input, Failure>) -> Void, _ input: Handed<Input>
) async -> StepRequest {
    await withCheckedContinuation { continuation in
        let slot = OneShot(continuation)
        stepper(.input(input.value, StepPromise { slot.resume(returning: $0) }))
    }
}

/// A continuation resumed by the first of any number of calls.
final class OneShot: Sendable {
    private let continuation: Mutex<CheckedContinuation<StepRequest, Never>?>
    init(_ continuation: CheckedContinuation<StepRequest, Never>) { self.continuation = Mutex(continuation) }
    func resume(returning request: StepRequest) {
        continuation.withLock { $0.take() }?.resume(returning: request)
    }
}

/// Whether the stepper has asked to stop: after `.cancel` it must hear nothing more, not even
/// the completion an operator sends as it stops.
final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

/// Upstream's inputs through OpenCombine's `.values`, for a task to iterate: the publisher's type
/// is erased here (a task may not capture a generic publisher's metatype), and upstream's
/// failure, which `.values` rethrows erased, is given back its type.
final class PublisherInputs<Output, Failure: Error>: @unchecked Sendable {  // iterated by one task
    private let nextInput: () async throws -> Output?
    init<Upstream: Publisher>(_ upstream: Upstream) where Upstream.Output == Output, Upstream.Failure == Failure {
        var iterator = upstream.values.makeAsyncIterator()
        nextInput = { try await iterator.next() }
    }
    func next() async throws(Failure) -> Output? {
        do { return try await nextInput() } catch { throw error as! Failure }
    }
}
