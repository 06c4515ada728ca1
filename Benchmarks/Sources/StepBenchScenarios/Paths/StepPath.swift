@_spi(Measurement) import Stepping

/// One transition of a stepping design, driven alone, on one thread, through the public API,
/// so that `stepbench profile` can count it exactly (instructions, synchronising instructions,
/// allocations per event). Each driver plays upstream itself, repeats one kind of event, checks
/// every event's effect (inputs, requests, cancels, completions) and throws if one is missing.
///
/// The asynchronous designs (the actors) run the same drivers: the driver parks until the
/// actor's thread has produced the event's effect, and the window counts every thread.
public enum StepPath: String, CaseIterable, Sendable, Codable {
    /// An input whose promise the stepper fulfils with `.more` inside its call.
    case syncMore = "sync-more"
    /// An input whose promise the driver fulfils with `.more` after the stepper returned: the
    /// branch a promise fulfilled on another thread takes.
    case deferredMore = "deferred-more"
    /// A call of an earlier input's promise, already fulfilled (stale and duplicate, S2 and S3).
    case stalePromise = "stale-promise"
    /// A subscription: subscribe, one input, `promise(.cancel)` after the stepper returned.
    case promiseCancel = "promise-cancel"
    /// A subscriber cancelled before its subscription arrives (which is then cancelled).
    case cancelUnsubscribed = "cancel-unsubscribed"
    /// A subscription: subscribe, then `cancel()`.
    case cancelSubscribed = "cancel-subscribed"
    /// A subscription: subscribe, one input, `cancel()` from inside the stepper.
    case cancelInStepper = "cancel-in-stepper"
    /// A subscription: subscribe, complete, then `cancel()` (which does nothing).
    case cancelAfterCompletion = "cancel-after-completion"
    /// A subscription: subscribe, then complete.
    case subscribeComplete = "subscribe-complete"
    /// A subscription: subscribe, one input, upstream completes from inside the stepper (C6).
    case reentrantCompletion = "reentrant-completion"

    /// What one event is: the unit of the per-event counts.
    public var event: String {
        switch self {
        case .syncMore, .deferredMore: "element"
        case .stalePromise: "stale call"
        default: "subscription"
        }
    }

    /// Whether a floor of the same shape exists: the same driver and upstream around a plain
    /// subscriber with no stepper and no promise. Paths about promises or `cancel()` have none.
    public var hasFloor: Bool { [.syncMore, .deferredMore, .subscribeComplete].contains(self) }

    /// The rule whose effect the driver waits for, where a design that declares it broken
    /// would leave the driver waiting: a re-entrant completion (C6) that is dropped, a
    /// `promise(.cancel)` (S4) that never cancels upstream, a `cancel()` from inside the stepper
    /// (C4) that waits for the open promise, the request a deferred `.more` makes (D2), which a
    /// design one input ahead made before.
    public var neededRule: SteppingRule? {
        switch self {
        case .reentrantCompletion: .c6
        case .promiseCancel: .s4
        case .cancelInStepper: .c4
        case .deferredMore: .d2
        default: nil
        }
    }

    /// Whether `subject` has this path: the floor only where ``hasFloor``; floor-step every
    /// path; a design every path but one whose ``neededRule`` it declares broken (an
    /// intermittent issue, a race, does not show on a path's one thread).
    public func isDefined(for subject: Subject) -> Bool {
        switch subject {
        case .floor: hasFloor
        case .floorStep: true
        case .design(let design):
            neededRule.map { design.traits.knownIssue($0).map(\.isIntermittent) ?? true } ?? true
        case .foreign: false
        }
    }

    /// Whether this path's counts for `subject` are fixed by the code, so that two profiles of
    /// one build agree and `compare` gates them. They are for the two floors and every design
    /// whose counts do not follow the schedule (``SteppingDesign/Traits/countsFollowTheSchedule``).
    /// A design that hands an event to another thread (`actor-stream`'s task) parks the driver
    /// until it is done: how often threads park and wake, and how long the runtime spins first,
    /// follow the schedule, and so do the counts of one build. Only `stale-promise`, which
    /// wakes no thread, is exact there; its `sync-step` profile (a drain that never parks) is
    /// gated too.
    public func countsAreExact(for subject: Subject) -> Bool {
        guard let design = subject.design, design.traits.countsFollowTheSchedule else { return true }
        return self == .stalePromise
    }

    /// One line for `stepbench list`.
    public var summary: String {
        switch self {
        case .syncMore: "an input and its .more inside the stepper call"
        case .deferredMore: "an input, then .more after the stepper returned (the cross-thread branch)"
        case .stalePromise: "a call of an earlier, fulfilled promise: does nothing"
        case .promiseCancel: "subscribe, an input, promise(.cancel)"
        case .cancelUnsubscribed: "cancel() before the subscription arrives"
        case .cancelSubscribed: "subscribe, cancel()"
        case .cancelInStepper: "subscribe, an input, cancel() inside the stepper"
        case .cancelAfterCompletion: "subscribe, complete, cancel()"
        case .subscribeComplete: "subscribe, complete"
        case .reentrantCompletion: "subscribe, an input, completion from inside the stepper"
        }
    }

    /// Drives `events` events of this path through `subject` inside one ``MeasuredWindow``
    /// labelled `label` (none: a warm-up outside any window), verifies them, and returns the
    /// allocations made meanwhile.
    public func drive(_ subject: Subject, events: Int, label: String?) throws -> UInt64 {
        try verify(isDefined(for: subject), "\(rawValue) is not defined for \(subject)")
        return try PathDriver(path: self, subject: subject, events: events).run(label: label)
    }
}
