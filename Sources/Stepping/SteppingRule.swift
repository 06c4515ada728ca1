/// The rules every stepping design is held to, by their ids in docs/CONFORMANCE.md (the
/// authority on what each rule says and how it is tested).
///
/// A design names the rules it knowingly breaks in its description
/// (``SteppingDesign/Traits/knownIssues``); the conformance kit runs every rule on every design
/// and reports those as known issues, not as failures.
public enum SteppingRule: String, CaseIterable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// Rule D1 (demand); its text: ``summary``.
    case d1 = "D1"
    /// Rule D2 (demand); its text: ``summary``.
    case d2 = "D2"
    /// Rule D3 (demand); its text: ``summary``.
    case d3 = "D3"
    /// Rule D4 (demand); its text: ``summary``.
    case d4 = "D4"
    /// Rule D5 (demand); its text: ``summary``.
    case d5 = "D5"
    /// Rule S1 (step); its text: ``summary``.
    case s1 = "S1"
    /// Rule S2 (step); its text: ``summary``.
    case s2 = "S2"
    /// Rule S3 (step); its text: ``summary``.
    case s3 = "S3"
    /// Rule S4 (step); its text: ``summary``.
    case s4 = "S4"
    /// Rule S5 (step); its text: ``summary``.
    case s5 = "S5"
    /// Rule C1 (completion and cancellation); its text: ``summary``.
    case c1 = "C1"
    /// Rule C2 (completion and cancellation); its text: ``summary``.
    case c2 = "C2"
    /// Rule C3 (completion and cancellation); its text: ``summary``.
    case c3 = "C3"
    /// Rule C4 (completion and cancellation); its text: ``summary``.
    case c4 = "C4"
    /// Rule C5 (completion and cancellation); its text: ``summary``.
    case c5 = "C5"
    /// Rule C6 (completion and cancellation); its text: ``summary``.
    case c6 = "C6"
    /// Rule C7 (completion and cancellation); its text: ``summary``.
    case c7 = "C7"
    /// Rule R1 (resources); its text: ``summary``.
    case r1 = "R1"
    /// Rule R2 (resources); its text: ``summary``.
    case r2 = "R2"
    /// Rule R3 (resources); its text: ``summary``.
    case r3 = "R3"
    /// Rule R4 (resources); its text: ``summary``.
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
