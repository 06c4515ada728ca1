import Dispatch
import Foundation
@preconcurrency import OpenCombine
import Stepping

// Known-bad designs, written as an outsider would write a design: public API only (no testable
// import, no SPI). One correct design, a lock around `StepStateMachine` whose actions are
// performed after the lock is let go (as Examples/SemaphoreStepping), and one plausible
// implementer's mistake per rule, switched on by a `Fault`. Each fault is the most plausible
// way that rule gets broken; KnownBadDesignTests checks that the kit fails it on its rule.

/// One mistake, named for the rule it breaks.
enum Fault: String, CaseIterable, Sendable {
    /// D1: the first demand is asked for twice ("to be sure it gets through").
    case d1RequestsTwiceOnSubscription
    /// D2: `receive(_:)` always returns `.max(1)`, as if demand had to be renewed per input.
    case d2ReturnsDemandForEveryInput
    /// D3: a `.more` inside the stepper call is requested at once instead of returned.
    case d3RequestsSynchronousMore
    /// D4: a later `.more` is requested from a Dispatch worker ("to stay off the caller's stack").
    case d4RequestsOnAWorker
    /// D5: a repeated `.more` forwards the extra demand it computes, `.none`, as a request.
    case d5ForwardsNoneDemand
    /// S1: an input upstream sends without demand reaches the stepper ("upstream knows best").
    case s1NeverDrops
    /// S2: a `.more` from a promise that already said `.more` requests again.
    case s2RepeatedMoreActs
    /// S3: the promise's id is not checked: any promise acts on the current input.
    case s3StalePromiseActs
    /// S4: `promise(.cancel)` cancels upstream but leaves the machine running.
    case s4CancelPromiseKeepsStepping
    /// S5: the lock is held while a later `.more` calls `request`: an upstream that sends the
    /// next input from inside `request` finds it taken, and the thread deadlocks on itself.
    case s5RequestsUnderLock
    /// C1: a failure reaches the stepper as `.finished`.
    case c1FailureAsFinished
    /// C2: the completion reaches the stepper before the machine has died, so the stepper's
    /// promise and `cancel()` still act upstream.
    case c2CompletionBeforeDeath
    /// C3: a second subscription is silently dropped, never cancelled.
    case c3SecondSubscriptionDropped
    /// C4: every `cancel()` cancels upstream, not only the first.
    case c4CancelNotIdempotent
    /// C5: an input that arrives before the subscription or after the end is answered with
    /// demand ("ask again when not ready").
    case c5DemandForIgnoredInput
    /// C6: a completion that arrives while the stepper runs is dropped.
    case c6DropsReentrantCompletion
    /// C7: the first request is made from a Dispatch worker, where it can follow `cancel()`.
    case c7FirstRequestOnAWorker
    /// R1: the stepper is kept in a field for good ("for debugging").
    case r1KeepsStepper
    /// R3: what the machine lets go of is let go while the lock is held.
    case r3ReleasesUnderLock
    /// R4: a recursive lock held across the first request: a `request` that waits for
    /// `cancel()` on another thread waits forever.
    case r4RequestUnderLock
}

final class FaultySubscriber<Input, Failure: Error>: SteppingSubscriber, StepPromiseTarget, AsynchronousDelivery,
    @unchecked Sendable  // `machine` and the bookkeeping below are touched only under `lock`
{
    private let fault: Fault?
    private let lock: NSLocking
    private var machine: StepStateMachine
    /// Bookkeeping some faults need, under `lock`.
    private var subscription: (any Subscription)? { held.object as? any Subscription }
    private var held = Weak()  // the subscription, weakly: holding it would break R1
    private var issued = StepStateMachine.noPromiseID  // the last promise handed out
    private var stepping = false
    private var saidMore = Set<StepPromiseID>()
    private var kept: AnyObject?  // r1KeepsStepper
    /// The requests the d4 and c7 faults left to a Dispatch worker and it has not made yet: a
    /// design that works off the caller's thread says when it is idle (``waitUntilIdle()``), so
    /// the checks see its effects, as they see the actors'.
    private let workers = DispatchGroup()

    /// The correct design: no fault.
    convenience init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.init(fault: nil, stepper: stepper)
    }

    init(fault: Fault?, stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.fault = fault
        lock = fault == .r4RequestUnderLock ? NSRecursiveLock() : NSLock()
        let box = StepperBox(stepper)
        machine = StepStateMachine(stepper: box)
        if fault == .r1KeepsStepper { kept = box }
    }

    private func locked<R>(_ body: () -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func receive(subscription: any Subscription) {
        if fault == .r4RequestUnderLock {
            lock.lock()
            defer { lock.unlock() }
            if case .requestFirst = machine.receiveSubscription(subscription) {
                held.object = subscription as AnyObject
                subscription.request(.max(1))
            } else {
                subscription.cancel()
            }
            return
        }
        let action = locked { () -> StepStateMachine.ReceiveSubscriptionAction in
            let action = machine.receiveSubscription(subscription)
            if case .requestFirst = action { held.object = subscription as AnyObject }
            return action
        }
        switch (fault, action) {
        case (.d1RequestsTwiceOnSubscription, .requestFirst(let first)):
            first.request(.max(1))
            first.request(.max(1))
        case (.c3SecondSubscriptionDropped, .cancel) where !locked({ machine.isDead }):
            break  // dropped, not cancelled
        case (.c7FirstRequestOnAWorker, .requestFirst(let first)):
            nonisolated(unsafe) let first = first
            DispatchQueue.global().async(group: workers) { first.request(.max(1)) }
        default:
            action.perform()
        }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        let (action, subscribed) = locked { () -> (StepStateMachine.ReceiveInputAction, Bool) in
            let action = machine.receiveInput()
            if case .callStepper(_, let id) = action {
                issued = id
                stepping = true
            }
            return (action, subscription != nil && !machine.isDead)
        }
        guard case .callStepper(let stepper, let id) = action else {
            if fault == .s1NeverDrops, subscribed,
                let stepper = locked({ () -> AnyObject? in
                    if case .subscribed(let s) = machine.state { return s.stepper }
                    if case .stepping(let s, _, _) = machine.state { return s.stepper }
                    return nil
                })
            {
                StepperBox<Input, Failure>.from(stepper).input(input, StepPromise(target: self, id: issued))
            }
            if fault == .c5DemandForIgnoredInput, !subscribed { return .max(1) }
            return .none
        }
        StepperBox<Input, Failure>.from(stepper).input(input, StepPromise(target: self, id: id))
        var returned: StepStateMachine.StepperReturnedAction? = locked {
            stepping = false
            return machine.stepperReturned()
        }
        let demand = returned!.perform()
        if fault == .r3ReleasesUnderLock { locked { returned = nil } }  // the stepper's last reference, under the lock
        _ = returned
        switch fault {
        case .d2ReturnsDemandForEveryInput: return .max(1)
        case .d3RequestsSynchronousMore where demand != .none:
            locked { subscription }?.request(demand)
            return .none
        default: return demand
        }
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        let completion = fault == .c1FailureAsFinished ? .finished : completion
        let ending = StepStateMachine.Ending(completion)
        if fault == .c6DropsReentrantCompletion, locked({ stepping }) { return }
        if fault == .c2CompletionBeforeDeath {
            let stepper = locked { () -> AnyObject? in
                if case .subscribed(let s) = machine.state { return s.stepper }
                return nil
            }
            if let stepper {
                StepperBox<Input, Failure>.from(stepper).call(.completion(completion))
                _ = locked { machine.receiveCompletion(ending) }  // delivered above: the machine only dies
                return
            }
        }
        var action: StepStateMachine.ReceiveCompletionAction? = locked { machine.receiveCompletion(ending) }
        action?.perform(ending)
        if fault == .r3ReleasesUnderLock { locked { action = nil } }  // the stepper's last reference, under the lock
        _ = action
    }

    func cancel() {
        let upstream = locked { subscription }
        var action: StepStateMachine.CancelAction? = locked { machine.cancel() }
        if fault == .c4CancelNotIdempotent, case StepStateMachine.CancelAction.none? = action {
            upstream?.cancel()
            return
        }
        action?.perform()
        if fault == .r3ReleasesUnderLock { locked { action = nil } }  // the stepper's last reference, under the lock
        _ = action
    }

    func completePromise(id: StepPromiseID, request: StepRequest) {
        var (action, repeated) = locked { () -> (StepStateMachine.CompletePromiseAction?, Bool) in
            let applied = fault == .s3StalePromiseActs ? issued : id
            if fault == .s4CancelPromiseKeepsStepping, request == .cancel, applied == issued, !machine.isDead {
                return (StepStateMachine.CompletePromiseAction.none, false)
            }
            let repeated = request == .more && !saidMore.insert(id).inserted
            return (machine.completePromise(id: applied, request: request), repeated)
        }
        if fault == .r3ReleasesUnderLock {
            action!.perform()
            locked { action = nil }  // the stepper's last reference, under the lock
            return
        }
        switch (fault, action!) {
        case (.s4CancelPromiseKeepsStepping, .none) where request == .cancel:
            locked { subscription }?.cancel()
        case (.s2RepeatedMoreActs, .none) where repeated && !locked({ stepping }):
            locked { subscription }?.request(.max(1))
        case (.d5ForwardsNoneDemand, .none) where repeated:
            locked { subscription }?.request(.none)  // the extra demand it computes for a repeat: none
        case (.d4RequestsOnAWorker, .request(let upstream)):
            nonisolated(unsafe) let upstream = upstream
            DispatchQueue.global().async(group: workers) { upstream.request(.max(1)) }
        case (.s5RequestsUnderLock, .request(let upstream)):
            locked { upstream.request(.max(1)) }
        default:
            action!.perform()
        }
        _ = (action, repeated)
    }
}

extension FaultySubscriber {
    func waitUntilIdle() { workers.wait() }
    var mailboxDescription: String { "requests on Dispatch workers not all made" }
}

/// A weak reference.
struct Weak {
    weak var object: AnyObject?
}

struct FaultyFactory: SteppingSubscriberFactory {
    let fault: Fault

    func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        FaultySubscriber(fault: fault, stepper: stepper)
    }
}
