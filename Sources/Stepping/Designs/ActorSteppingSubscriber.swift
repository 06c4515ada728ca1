import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// The `actor` design: a ``StepActor`` owns the ``StepStateMachine``; every signal reaches it
/// through one order-preserving mailbox (an `AsyncStream` drained by one long-lived task
/// running on the actor), so completion can never overtake the last input.
///
/// `receive(_:)` returns `.none`; demand goes upstream from the actor (rules D3/D4 hold in
/// their asynchronous form: exactly one `request(.max(1))` per `.more`, soon after).
/// `cancel()` takes effect synchronously enough for rule C4: it raises a flag the actor checks
/// right before every stepper call, so once `cancel()` returns the stepper is called at most
/// once more (a call the actor had already begun). Upstream is cancelled by the actor.
///
/// Cost per element (synchronous `.more`): two mailbox hand-offs (input, promise), each a
/// locked enqueue plus, when the drain task was idle, one resumption on the actor's own serial
/// queue (see ``QueueExecutor``); no `Task` per element.
@usableFromInline
final class ActorSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber, AsynchronousDelivery,
    @unchecked Sendable  // only `mailbox` (thread-safe) is touched from outside the actor.
{
    @usableFromInline let mailbox: StepMailbox<Input, Failure>

    @usableFromInline
    init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        mailbox = StepMailbox(stepper: StepperBox(stepper))
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
        mailbox.post(.input(input))
        return .none
    }

    @usableFromInline func receive(completion: Subscribers.Completion<Failure>) { mailbox.post(.completion(completion)) }

    @usableFromInline
    func cancel() {
        // Only the first cancel() queues a signal: callers cannot flood the mailbox.
        if !mailbox.cancelled.exchange(true, ordering: .sequentiallyConsistent) {
            mailbox.post(.cancel)
        }
    }

    @usableFromInline func waitUntilIdle() { mailbox.waitUntilIdle() }
}

/// The mailbox between the subscriber's callers and the actor; also the promises' target, so a
/// promise kept by the stepper does not keep the actor alive.
@usableFromInline
final class StepMailbox<Input, Failure: Error>: StepPromiseTarget,
    @unchecked Sendable  // AsyncStream.Continuation and the atomics are thread-safe.
{
    @usableFromInline
    enum Signal {
        case subscription(any Subscription)
        case input(Input)
        case completion(Subscribers.Completion<Failure>)
        case promise(StepStateMachine.PromiseID, StepRequest)
        case cancel
    }

    private let continuation: AsyncStream<Unchecked<Signal>>.Continuation
    /// Set by `cancel()` before its signal is queued; checked by the actor before each stepper call.
    let cancelled = Atomic<Bool>(false)
    /// The id of the promise the actor handed out last (set before the stepper call).
    let issuedPromise = Atomic<UInt64>(StepStateMachine.noPromiseID)
    /// The id of the last promise that was queued; a promise is queued at most once.
    private let queuedPromise = Atomic<UInt64>(StepStateMachine.noPromiseID)
    private let posted = Atomic<Int>(0)
    private let handled = Atomic<Int>(0)

    init(stepper: StepperBox<Input, Failure>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Unchecked<Signal>.self,
                                                             bufferingPolicy: .unbounded)
        self.continuation = continuation
        let actor = StepActor<Input, Failure>(stepper: stepper, mailbox: self)
        let signals = Unchecked(stream)
        Task.detached(executorPreference: actor.executor) { await actor.run(signals.value) }
    }

    /// Queues a signal. Signals from one thread keep their order; upstream's are serial.
    /// Returns false if the machine is dead and the mailbox closed (the signal is dropped).
    @discardableResult
    func post(_ signal: Signal) -> Bool {
        posted.add(1, ordering: .sequentiallyConsistent)
        if case .terminated = continuation.yield(Unchecked(signal)) {
            handled.add(1, ordering: .sequentiallyConsistent)  // nothing will handle it
            return false
        }
        return true
    }

    var counts: (posted: Int, handled: Int) {
        (posted.load(ordering: .sequentiallyConsistent), handled.load(ordering: .sequentiallyConsistent))
    }

    func didHandle() { handled.add(1, ordering: .sequentiallyConsistent) }

    func finish() { continuation.finish() }

    /// Queues the first call of the current promise only. Stale and duplicate calls, which the
    /// machine would ignore anyway (S2, S3), are dropped here, so that a thread calling a
    /// promise in a loop cannot flood the mailbox and starve the real signals behind it.
    @usableFromInline
    func completePromise(id: StepStateMachine.PromiseID, request: StepRequest) {
        guard id == issuedPromise.load(ordering: .acquiring),
              queuedPromise.exchange(id, ordering: .acquiringAndReleasing) != id else { return }
        post(.promise(id, request))
    }

    func waitUntilIdle() {
        while handled.load(ordering: .sequentiallyConsistent) < posted.load(ordering: .sequentiallyConsistent) {
            usleep(20)
        }
    }
}

/// Owns the state machine; handles the mailbox's signals one at a time, in order.
actor StepActor<Input, Failure: Error> {
    typealias Signal = StepMailbox<Input, Failure>.Signal
    private var machine: StepStateMachine
    private let mailbox: StepMailbox<Input, Failure>
    nonisolated let executor = QueueExecutor(label: "stepbench.actor")

    /// Runs on its own serial queue, not the cooperative pool (see ``QueueExecutor``).
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(stepper: StepperBox<Input, Failure>, mailbox: StepMailbox<Input, Failure>) {
        machine = StepStateMachine(stepper: stepper)
        self.mailbox = mailbox
    }

    /// Drains the mailbox on this actor until it is finished (the machine died, or the
    /// subscriber was deinitialised): one task per subscriber, no task per element.
    func run(_ signals: AsyncStream<Unchecked<Signal>>) async {
        for await signal in signals {
            handle(signal.value)
            mailbox.didHandle()
        }
    }

    private func handle(_ signal: Signal) {
        switch signal {
        case .subscription(let subscription):
            // After cancel() returned, no request may reach upstream (rule C7): a subscription
            // that arrives behind a cancel is cancelled, not asked for demand.
            if cancelIfRequested() {
                subscription.cancel()
                break
            }
            switch machine.receiveSubscription(subscription) {
            case .requestFirst(let s): s.request(.max(1))
            case .cancel(let s): s.cancel()
            }
        case .input(let input):
            guard !cancelIfRequested() else { return }
            guard case .callStepper(let stepper, let id) = machine.receiveInput() else { return }
            mailbox.issuedPromise.store(id, ordering: .releasing)
            StepperBox<Input, Failure>.from(stepper).input(input, StepPromise(target: mailbox, id: id))
            // Promises fulfilled during the call are queued behind us, so the demand is `.none`
            // unless a cancel or a re-entrant completion changed the state.
            let demand = StepperBox<Input, Failure>.perform(machine.stepperReturned())
            if demand != .none, case .subscribed(let s) = machine.state { s.subscription.request(demand) }
        case .completion(let completion):
            guard !cancelIfRequested() else { return }
            StepperBox<Input, Failure>.perform(machine.receiveCompletion(.init(completion)), completion)
        case .promise(let id, let request):
            // After cancel() returned, no request may reach upstream: apply the cancel first.
            guard !cancelIfRequested() else { break }
            machine.completePromise(id: id, request: request).perform()
        case .cancel:
            _ = cancelIfRequested()
        }
        if machine.isDead { mailbox.finish() }
    }

    /// Applies a pending `cancel()`: returns true if the machine is (now) cancelled.
    private func cancelIfRequested() -> Bool {
        guard mailbox.cancelled.load(ordering: .sequentiallyConsistent) else { return false }
        machine.cancel().perform()
        return true
    }
}
