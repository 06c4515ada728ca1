/// The rules every stepping design is held to, by their ids in docs/CONFORMANCE.md (the
/// authority on what each rule says and how it is tested).
///
/// A design names the rules it knowingly breaks in its description
/// (``SteppingDesign/Traits/knownIssues``); the conformance kit runs every rule on every design
/// and reports those as known issues, not as failures.
public enum SteppingRule: String, CaseIterable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// D1: After the subscription, exactly one request(.max(1)).
    case d1 = "D1"
    /// D2: At most one input outstanding, whatever the stepper does.
    case d2 = "D2"
    /// D3: .more during the stepper call is returned from receive(_:), not requested.
    case d3 = "D3"
    /// D4: .more after the stepper returned makes exactly one request.
    case d4 = "D4"
    /// D5: Request(.none) is never called.
    case d5 = "D5"
    /// S1: Inputs reach the stepper in order, one at a time; an input without demand is dropped.
    case s1 = "S1"
    /// S2: A promise acts at most once.
    case s2 = "S2"
    /// S3: A stale promise does nothing.
    case s3 = "S3"
    /// S4: Promise(.cancel) cancels upstream once; no event follows.
    case s4 = "S4"
    /// S5: Re-entrant promises and upstreams neither deadlock nor deepen the stack.
    case s5 = "S5"
    /// C1: The completion reaches the stepper exactly once.
    case c1 = "C1"
    /// C2: No request or cancel while handling a completion.
    case c2 = "C2"
    /// C3: A second subscription, or one after cancel, is cancelled.
    case c3 = "C3"
    /// C4: Cancel() is safe from any thread, any number of times, and final.
    case c4 = "C4"
    /// C5: A misbehaving upstream is ignored.
    case c5 = "C5"
    /// C6: A re-entrant completion reaches the stepper once, after the call returns.
    case c6 = "C6"
    /// C7: After cancel() a subscription is answered with a cancel, never with demand.
    case c7 = "C7"
    /// R1: Completion or cancel releases the stepper and the subscription.
    case r1 = "R1"
    /// R2: A design that claims zero allocations per step is measured to make none.
    case r2 = "R2"
    /// R3: The stepper is released outside any lock.
    case r3 = "R3"
    /// R4: No number of threads and no slow request crashes or stalls a design.
    case r4 = "R4"

    /// The rule in one line.
    public var summary: String {
        switch self {
        case .d1: "after the subscription, exactly one request(.max(1))"
        case .d2: "at most one input outstanding, whatever the stepper does"
        case .d3: ".more during the stepper call is returned from receive(_:), not requested"
        case .d4: ".more after the stepper returned makes exactly one request"
        case .d5: "request(.none) is never called"
        case .s1: "inputs reach the stepper in order, one at a time; an input without demand is dropped"
        case .s2: "a promise acts at most once"
        case .s3: "a stale promise does nothing"
        case .s4: "promise(.cancel) cancels upstream once; no event follows"
        case .s5: "re-entrant promises and upstreams neither deadlock nor deepen the stack"
        case .c1: "the completion reaches the stepper exactly once"
        case .c2: "no request or cancel while handling a completion"
        case .c3: "a second subscription, or one after cancel, is cancelled"
        case .c4: "cancel() is safe from any thread, any number of times, and final"
        case .c5: "a misbehaving upstream is ignored"
        case .c6: "a re-entrant completion reaches the stepper once, after the call returns"
        case .c7: "after cancel() a subscription is answered with a cancel, never with demand"
        case .r1: "completion or cancel releases the stepper and the subscription"
        case .r2: "a design that claims zero allocations per step is measured to make none"
        case .r3: "the stepper is released outside any lock"
        case .r4: "no number of threads and no slow request crashes or stalls a design"
        }
    }

    /// The rule's id, as docs/CONFORMANCE.md writes it (`D1`).
    public var description: String { rawValue }

    /// Rules in the order of docs/CONFORMANCE.md.
    public static func < (a: SteppingRule, b: SteppingRule) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
