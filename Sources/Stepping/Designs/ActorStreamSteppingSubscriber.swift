import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The `actor-stream` design: the straightforward actor. A ``StreamStepActor`` owns the
/// state machine (``ActorMachine``); every signal reaches it through an `AsyncStream` drained
/// by one long-lived task on the actor. Kept next to the tuned `actor` so that reports show
/// what the obvious actor costs: each signal is an `AsyncStream` element (a locked buffer, a
/// continuation and task machinery per element).
///
/// Its actor runs on a serial `DispatchQueue` (``QueueExecutor``), so the stepper runs on a
/// libdispatch worker thread, and a stepper that blocks holds that thread. Hundreds of blocked
/// steppers sometimes stall others (measured here: of 600 whose steppers wait for each other,
/// 423 to 600 began within 10 s, depending on what else the process ran; of 1,000, 997): a
/// declared, intermittent known issue of rule R4.
/// Steppers of this design must not block.
///
/// Rules as for `actor`: `receive(_:)` returns `.none` and demand after a `.more` goes upstream
/// from the actor; the subscription is answered on the subscribing thread; `cancel()` raises a
/// flag the actor checks before every stepper call (rule C4); a promise the stepper keeps still
/// acts after the caller let go of the subscriber.
@usableFromInline
final class ActorStreamSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, AsynchronousDelivery,
    @unchecked Sendable  // only `mailbox` (thread-safe) is touched from outside the actor.
{
    @usableFromInline let mailbox: StreamMailbox<Input, Failure>

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        mailbox = StreamMailbox(stepper: StepperBox(stepper))
    }

    @usableFromInline
    func receive(subscription: any Subscription) {
        mailbox.gate.answer(subscription) { mailbox.post($0) }
    }

    @usableFromInline
    func receive(_ input: Input) -> Subscribers.Demand {
        if mailbox.gate.takeInput() { mailbox.post(.input, input) }  // else dropped (no demand: S1)
        return .none
    }

    @usableFromInline func receive(completion: Subscribers.Completion<Failure>) {
        mailbox.post(.completion(.init(completion)))
    }

    @usableFromInline
    func cancel() {
        if mailbox.gate.requestCancel() { mailbox.post(.cancel) }
    }

    @usableFromInline func waitUntilIdle() { mailbox.waitUntilIdle() }

    @usableFromInline var mailboxDescription: String {
        "\(mailbox.queued.load(ordering: .sequentiallyConsistent)) queued"
    }
}

/// The `AsyncStream` between the subscriber's callers and the actor; also the promises' target.
///
/// Lifetime: the subscriber and the promises hold the mailbox; the actor (held by its task,
/// which the stream holds while it waits) refers to it unowned. While a signal is queued the
/// mailbox holds itself (``queued``), so the actor never handles a signal after the mailbox
/// is gone. Once nothing holds it, no signal can come: its `deinit` finishes the stream and the
/// task ends. A promise the stepper keeps therefore keeps the mailbox and the task alive until
/// it acts, as it keeps its subscriber alive in the other designs.
@usableFromInline
final class StreamMailbox<Input, Failure: Error>: StepPromiseTarget,
    @unchecked Sendable  // AsyncStream.Continuation and the atomics are thread-safe.
{
    /// A signal, and the value when it is an input.
    typealias Signal = (MailboxSignal, Input?)

    private let continuation: AsyncStream<Unchecked<Signal>>.Continuation
    let gate = ActorGate()
    /// Signals posted and not yet handled. The post that raises it from 0 retains the mailbox;
    /// the handling that brings it back to 0 releases it.
    let queued = Atomic<Int>(0)

    @usableFromInline
    init(stepper: StepperBox<Input, Failure>) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Unchecked<Signal>.self,
            bufferingPolicy: .unbounded)
        self.continuation = continuation
        let actor = StreamStepActor<Input, Failure>(stepper: stepper, mailbox: self)
        let signals = Unchecked(stream)
        Task.detached(executorPreference: actor.executor) { await actor.run(signals.value) }
    }

    deinit { continuation.finish() }

    /// Queues a signal. Signals from one thread keep their order; upstream's are serial.
    /// Returns false if the machine is dead and the mailbox closed (the signal is dropped).
    @discardableResult
    func post(_ signal: MailboxSignal, _ input: Input? = nil) -> Bool {
        if queued.add(1, ordering: .sequentiallyConsistent).oldValue == 0 { _ = Unmanaged.passRetained(self) }
        if case .terminated = continuation.yield(Unchecked((signal, input))) {
            didHandle()  // nothing will handle it
            return false
        }
        return true
    }

    /// A signal was handled; the last one queued lets go of the mailbox (see ``queued``). The
    /// caller must not touch the mailbox afterwards.
    func didHandle() {
        if queued.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 {
            Unmanaged.passUnretained(self).release()
        }
    }

    func finish() { continuation.finish() }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        if gate.admitsPromise(id: id) { post(.promise(id, request)) }
    }

    func waitUntilIdle() {
        while queued.load(ordering: .sequentiallyConsistent) > 0 {
            usleep(20)
        }
    }
}

/// Owns the state machine; handles the stream's signals one at a time, in order.
actor StreamStepActor<Input, Failure: Error> {
    typealias Signal = StreamMailbox<Input, Failure>.Signal
    private var machine: ActorMachine
    /// Unowned: touched only while handling a signal, and a mailbox with a signal queued holds
    /// itself (``StreamMailbox/queued``); a strong reference would keep it, and so the task,
    /// alive for ever.
    private unowned(unsafe) let mailbox: StreamMailbox<Input, Failure>
    nonisolated let executor = QueueExecutor(label: "stepbench.actor-stream")

    /// Runs on its own serial queue, not the cooperative pool (see ``QueueExecutor``).
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(stepper: StepperBox<Input, Failure>, mailbox: StreamMailbox<Input, Failure>) {
        machine = ActorMachine(stepper: stepper)
        self.mailbox = mailbox
    }

    /// Drains the stream on this actor until it is finished (the machine died, or nothing
    /// holds the mailbox any more): one task per subscriber. After a stepper call, the signals
    /// posted during it are handled while the machine still steps (see ``ActorMachine``): the
    /// count of those still to come is `duringCall`, nil when no stepper call is open.
    func run(_ signals: AsyncStream<Unchecked<Signal>>) async {
        var duringCall: Int?
        for await signal in signals {
            let (signal, input) = signal.value
            if case .input = signal {
                if let (stepper, promise) = machine.beginInput(gate: mailbox.gate, target: mailbox) {
                    StepperBox<Input, Failure>.from(stepper).input(input.unsafelyUnwrapped, promise)
                    // Queued now, less this input (still counted): the signals posted during the call.
                    duringCall = mailbox.queued.load(ordering: .sequentiallyConsistent) &- 1
                } else if let n = duringCall {
                    duringCall = n &- 1  // dropped while stepping
                }
            } else {
                machine.handle(signal, gate: mailbox.gate)
                if let n = duringCall { duringCall = n &- 1 }
            }
            if duringCall == 0 {
                machine.endInput(gate: mailbox.gate)
                duringCall = nil
            }
            if machine.isDead { mailbox.finish() }
            mailbox.didHandle()
        }
    }
}

extension SteppingDesign {
    /// The straightforward actor: as ``actor``, but its mailbox is an `AsyncStream` drained by one
    /// task on a serial `DispatchQueue`. Shows what the obvious actor costs (allocations and task
    /// machinery per signal). Its stepper runs on libdispatch's workers: a stepper that blocks
    /// holds one, and hundreds that block at once can stall some of its subscriptions (a
    /// declared, intermittent known issue of rule R4). Its instruction count
    /// follows where the binary's code lies (the concurrency runtime's caches hash addresses):
    /// deterministic for one binary, it moves by a few percent between builds that differ
    /// elsewhere, so its gate allows 5% (a change of its own mailbox or task machinery costs
    /// thousands of instructions per element).
    @inlinable public static var actorStream: SteppingDesign { SteppingDesign(id: .actorStream) }

    static let actorStreamDescription = Description(
        name: "actor-stream",
        traits: Traits(
            delivery: .onOwnExecutor, allocatesPerElement: true,
            knownIssues: [
                .init(
                    .r4,
                    "a stepper that blocks holds the libdispatch worker its actor runs on: of 600 subscriptions whose steppers block until all have begun, as few as 423 began within 10 s in one run, all 600 in others (it depends on what else the process runs)",
                    isIntermittent: true)
            ]
        ).measured(instructionTolerance: 0.05))
}
