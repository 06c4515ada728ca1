@preconcurrency import OpenCombine
import Synchronization

// What the two actor designs (`actor`, `actor-stream`) share: the signals their mailboxes
// carry, the flags their callers set outside the actor, and how the actor handles one signal.
// They differ only in the mailbox between the callers and the actor.

/// One signal for an actor design's mailbox.
@usableFromInline
enum ActorSignal<Input, Failure: Error> {
    case subscription(any Subscription)
    case input(Input)
    case completion(Subscribers.Completion<Failure>)
    case promise(StepStateMachine.PromiseID, StepRequest)
    case cancel
}

/// The state callers share with the actor without entering it: `cancel()`'s flag and the
/// promise filter. Stored inline in the mailbox (no object of its own).
struct ActorGate: ~Copyable, Sendable {
    /// Set by `cancel()` before its signal is queued; checked by the actor before each stepper call.
    let cancelled = Atomic<Bool>(false)
    /// The id of the promise the actor handed out last (set before the stepper call).
    let issuedPromise = Atomic<UInt64>(StepStateMachine.noPromiseID)
    /// The id of the last promise that was queued; a promise is queued at most once.
    private let queuedPromise = Atomic<UInt64>(StepStateMachine.noPromiseID)

    init() {}

    /// Raises the cancel flag; true for the first call only, so that only one cancel signal is
    /// queued and callers cannot flood the mailbox.
    func requestCancel() -> Bool {
        !cancelled.exchange(true, ordering: .sequentiallyConsistent)
    }

    /// Whether a promise call must be queued: the first call of the current promise only. Stale
    /// and duplicate calls, which the machine would ignore anyway (S2, S3), are dropped here, so
    /// that a thread calling a promise in a loop cannot flood the mailbox and starve the real
    /// signals behind it.
    func admitsPromise(id: StepStateMachine.PromiseID) -> Bool {
        id == issuedPromise.load(ordering: .acquiring)
            && queuedPromise.exchange(id, ordering: .acquiringAndReleasing) != id
    }
}

/// The actor's state: the ``StepStateMachine``, and how one signal moves it.
struct ActorMachine<Input, Failure: Error> {
    private var machine: StepStateMachine

    init(stepper: StepperBox<Input, Failure>) {
        machine = StepStateMachine(stepper: stepper)
    }

    /// Whether the machine is dead: the mailbox can be closed.
    var isDead: Bool { machine.isDead }

    /// Handles one signal, in mailbox order. `target` receives the promises handed out.
    mutating func handle(_ signal: ActorSignal<Input, Failure>, gate: borrowing ActorGate,
                         target: any StepPromiseTarget) {
        switch signal {
        case .subscription(let subscription):
            // After cancel() returned, no request may reach upstream (rule C7): a subscription
            // that arrives behind a cancel is cancelled, not asked for demand.
            if cancelIfRequested(gate) {
                subscription.cancel()
                return
            }
            switch machine.receiveSubscription(subscription) {
            case .requestFirst(let s): s.request(.max(1))
            case .cancel(let s): s.cancel()
            }
        case .input(let input):
            guard !cancelIfRequested(gate) else { return }
            guard case .callStepper(let stepper, let id) = machine.receiveInput() else { return }
            gate.issuedPromise.store(id, ordering: .releasing)
            unsafeDowncast(stepper, to: StepperBox<Input, Failure>.self).input(input, StepPromise(target: target, id: id))
            // Promises fulfilled during the call are queued behind us, so the demand is `.none`
            // unless a cancel or a re-entrant completion changed the state.
            let returned = machine.stepperReturned()
            if case .demand(.none) = returned { return }
            let demand = StepperBox<Input, Failure>.perform(returned)
            if demand != .none, case .subscribed(let s) = machine.state { s.subscription.request(demand) }
        case .completion(let completion):
            guard !cancelIfRequested(gate) else { return }
            StepperBox<Input, Failure>.perform(machine.receiveCompletion(.init(completion)), completion)
        case .promise(let id, let request):
            // After cancel() returned, no request may reach upstream: apply the cancel first.
            guard !cancelIfRequested(gate) else { return }
            machine.completePromise(id: id, request: request).perform()
        case .cancel:
            _ = cancelIfRequested(gate)
        }
    }

    /// Applies a pending `cancel()`: returns true if the machine is (now) cancelled.
    private mutating func cancelIfRequested(_ gate: borrowing ActorGate) -> Bool {
        guard gate.cancelled.load(ordering: .sequentiallyConsistent) else { return false }
        machine.cancel().perform()
        return true
    }
}
