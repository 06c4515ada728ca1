import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The `actor-stream` design: the straightforward actor. A ``StreamStepActor`` owns the
/// state machine (``ActorMachine``); every signal reaches it through an `AsyncStream` drained
/// by one long-lived task on the actor. Kept next to the tuned `actor` so that reports show
/// what the obvious actor costs: each signal is an `AsyncStream` element (a locked buffer, a
/// continuation and task machinery per element).
///
/// Rules as for `actor`: `receive(_:)` returns `.none` and demand goes upstream from the actor;
/// `cancel()` raises a flag the actor checks before every stepper call (rule C4).
@usableFromInline
final class ActorStreamSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, AsynchronousDelivery,
    @unchecked Sendable  // only `mailbox` (thread-safe) is touched from outside the actor.
{
    @usableFromInline let mailbox: StreamMailbox<Input, Failure>

    @inlinable
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        mailbox = StreamMailbox(stepper: StepperBox(stepper))
    }

    deinit { mailbox.finish() }

    @usableFromInline
    func receive(subscription: any Subscription) {
        if !mailbox.post(.subscription(subscription)) {
            subscription.cancel()  // dead: the actor is gone; answer as the machine would (RS 2.5)
        }
    }

    @usableFromInline
    func receive(_ input: Input) -> Subscribers.Demand {
        mailbox.post(.input, input)
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
        "posted \(mailbox.posted.load(ordering: .sequentiallyConsistent)), handled \(mailbox.handled.load(ordering: .sequentiallyConsistent))"
    }
}

/// The `AsyncStream` between the subscriber's callers and the actor; also the promises'
/// target, so a promise kept by the stepper does not keep the actor alive.
@usableFromInline
final class StreamMailbox<Input, Failure: Error>: StepPromiseTarget,
    @unchecked Sendable  // AsyncStream.Continuation and the atomics are thread-safe.
{
    /// A signal, and the value when it is an input.
    typealias Signal = (MailboxSignal, Input?)

    private let continuation: AsyncStream<Unchecked<Signal>>.Continuation
    let gate = ActorGate()
    let posted = Atomic<Int>(0)
    let handled = Atomic<Int>(0)

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

    /// Queues a signal. Signals from one thread keep their order; upstream's are serial.
    /// Returns false if the machine is dead and the mailbox closed (the signal is dropped).
    @discardableResult
    func post(_ signal: MailboxSignal, _ input: Input? = nil) -> Bool {
        posted.add(1, ordering: .sequentiallyConsistent)
        if case .terminated = continuation.yield(Unchecked((signal, input))) {
            handled.add(1, ordering: .sequentiallyConsistent)  // nothing will handle it
            return false
        }
        return true
    }

    func didHandle() { handled.add(1, ordering: .sequentiallyConsistent) }

    func finish() { continuation.finish() }

    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        if gate.admitsPromise(id: id) { post(.promise(id, request)) }
    }

    func waitUntilIdle() {
        while handled.load(ordering: .sequentiallyConsistent) < posted.load(ordering: .sequentiallyConsistent) {
            usleep(20)
        }
    }
}

/// Owns the state machine; handles the stream's signals one at a time, in order.
actor StreamStepActor<Input, Failure: Error> {
    typealias Signal = StreamMailbox<Input, Failure>.Signal
    private var machine: ActorMachine
    private let mailbox: StreamMailbox<Input, Failure>
    nonisolated let executor = QueueExecutor(label: "stepbench.actor-stream")

    /// Runs on its own serial queue, not the cooperative pool (see ``QueueExecutor``).
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(stepper: StepperBox<Input, Failure>, mailbox: StreamMailbox<Input, Failure>) {
        machine = ActorMachine(stepper: stepper)
        self.mailbox = mailbox
    }

    /// Drains the stream on this actor until it is finished (the machine died, or the
    /// subscriber was deinitialised): one task per subscriber.
    func run(_ signals: AsyncStream<Unchecked<Signal>>) async {
        for await signal in signals {
            let (signal, input) = signal.value
            machine.handle(signal, gate: mailbox.gate, target: mailbox) { stepper, promise in
                unsafeDowncast(stepper, to: StepperBox<Input, Failure>.self).input(input.unsafelyUnwrapped, promise)
            }
            if machine.isDead { mailbox.finish() }
            mailbox.didHandle()
        }
    }
}
