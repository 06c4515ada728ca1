import Foundation
@preconcurrency import OpenCombine
import Synchronization

/// Owns the state machine; handles the mailbox's signals one at a time, in order, on the thread
/// that drains the mailbox (its executor, ``DrainExecutor``).
actor StepActor<Input, Failure: Error> {
    /// Actor-isolated, so accesses are already serialised; the run-time exclusivity check
    /// would re-prove it on every signal, on the per-element path.
    @exclusivity(unchecked) private var machine: ActorMachine
    nonisolated let executor = DrainExecutor()

    /// Isolated to whichever thread drains the mailbox (see ``DrainExecutor``), not to a queue
    /// or the cooperative pool.
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(stepper: StepperBox<Input, Failure>) {
        machine = ActorMachine(stepper: stepper)
    }

    /// Handles the mailbox's signals until it is empty; first, with `beginningWithInput`, the
    /// input its caller put in the mailbox's `current` (an input that took the drain is not
    /// queued). Synchronous: the hot loop has no suspension points, no task and no hop.
    func drain(_ mailbox: StepMailbox<Input, Failure>, beginningWithInput: Bool) {
        #if DEBUG
            preconditionIsolated("the actor mailbox's drain runs on the thread that took the actor")
        #endif
        // Made once per drain: converting the generic mailbox to the existential per element
        // looked its metadata up every time.
        let target: any StepPromiseTarget = mailbox
        mailbox.beginDrain()
        if beginningWithInput {
            handleInput(mailbox, target)
            if machine.isDead { mailbox.close() }
        }
        var remaining = 0
        while true {
            switch mailbox.next(endingDrain: true, remaining: &remaining) {
            case .empty: return
            case .input: handleInput(mailbox, target)
            case .promise(let id, let request): machine.handlePromise(id: id, request: request, gate: mailbox.gate)
            case .other(let signal): machine.handle(signal.value, gate: mailbox.gate)
            }
            if machine.isDead { mailbox.close() }
            if mailbox.owesHandOff {  // its share of other threads' signals handled: give the caller back
                mailbox.handOff()
                return
            }
        }
    }

    /// Handles the input the drain took: the stepper call, then the signals that arrived
    /// during it, handled while the machine still steps (see ``ActorMachine``); an input among
    /// them is dropped, as the stepping machine would drop it (S1).
    private func handleInput(_ mailbox: StepMailbox<Input, Failure>, _ target: any StepPromiseTarget) {
        guard let (stepper, promise) = machine.beginInput(gate: mailbox.gate, target: target) else {
            mailbox.current.deinitialize(count: 1)  // dropped (no demand, or cancelled)
            return
        }
        mailbox.stepping = true
        StepperBox<Input, Failure>.from(stepper).input(mailbox.current.move(), promise)
        mailbox.stepping = false
        // A `.more` fulfilled inside the call, before anything else of this thread's: first.
        let more = mailbox.takePendingMore()
        if more != StepStateMachine.noPromiseID { machine.handlePromise(id: more, request: .more, gate: mailbox.gate) }
        guard mailbox.hasQueuedSignals else {  // the common case: nothing else arrived during the call
            machine.endInput(gate: mailbox.gate)
            return
        }
        // The signals queued when the stepper returned, and no more: later ones wait for the
        // drain, so that a flood cannot hold the machine stepping.
        var remaining = 0
        var left = -1  // how many are still to take: known after the first
        while left != 0 {
            switch mailbox.next(endingDrain: false, remaining: &remaining) {
            case .empty: break
            case .input: mailbox.current.deinitialize(count: 1)
            case .promise(let id, let request): machine.handlePromise(id: id, request: request, gate: mailbox.gate)
            case .other(let signal): machine.handle(signal.value, gate: mailbox.gate)
            }
            left = left < 0 ? remaining : left - 1
        }
        machine.endInput(gate: mailbox.gate)
    }
}

/// What the drain finds in the mailbox.
enum MailboxNext: Sendable {
    /// The next signal is an input; its value has been moved to the mailbox's `current`.
    case input
    /// The next signal is a promise's call (the common case beside inputs: no payload to copy).
    case promise(StepStateMachine.PromiseID, StepRequest)
    /// The next signal, a rare one (subscription, completion, cancel).
    case other(Unchecked<MailboxSignal>)
    /// Nothing queued: the drain ends.
    case empty
}
