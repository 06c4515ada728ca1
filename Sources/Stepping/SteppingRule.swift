/// The rules every stepping design is held to, by their ids in docs/CONFORMANCE.md (the
/// authority on what each rule says and how it is tested).
///
/// A design names the rules it knowingly breaks in its description
/// (``SteppingDesign/Traits/knownIssues``); the conformance kit runs every rule on every design
/// and reports those as known issues, not as failures.
public enum SteppingRule: String, CaseIterable, Sendable, Codable, Comparable, CustomStringConvertible {
    case d1 = "D1", d2 = "D2", d3 = "D3", d4 = "D4", d5 = "D5"
    case s1 = "S1", s2 = "S2", s3 = "S3", s4 = "S4", s5 = "S5"
    case c1 = "C1", c2 = "C2", c3 = "C3", c4 = "C4", c5 = "C5", c6 = "C6", c7 = "C7"
    case r1 = "R1", r2 = "R2", r3 = "R3", r4 = "R4"

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

    public var description: String { rawValue }

    public static func < (a: SteppingRule, b: SteppingRule) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}
