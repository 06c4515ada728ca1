@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance

/// A peer's library in a plain program, as its users write it (registered with the tool beside
/// the peer's direct row): on `(0..<n).publisher`, started and awaited as a user's code is
/// (`plain-sync`), and the same program on sync-step's upstream (`plain-upstream`). Beside the
/// direct row they say what a reader's own code would cost and what the direct row's difference
/// from it is made of: the upstream (`plain-upstream` − `plain-sync`) and the rest, the harness's
/// consumer against the plain program (`direct-sync` − `plain-upstream`).
public struct PlainRow: Sendable {
    /// Where a program's elements come from.
    public enum Source: Sendable {
        /// `(0..<n).publisher`, built inside the program as a user writes it.
        case sequence(Int)
        /// Sync-step's upstream, type-erased at `subscribe` only (as the direct row's is).
        case suite(AnyPublisher<Int, Never>)
    }

    /// Runs the program over `source`, calling `each` with every element in order; returns once
    /// the program's end was awaited.
    public typealias Program = @Sendable (_ source: Handed<Source>, _ each: @escaping @Sendable (Int) -> Void) -> Void

    /// The peer whose library the program uses.
    public let peer: SteppingDesign
    let program: Program

    public init(of peer: SteppingDesign, program: @escaping Program) {
        self.peer = peer
        self.program = program
    }

    /// The rows this process registered (``register(_:)``), in order.
    public static var registered: [PlainRow] { rows.registered }

    public static func of(_ design: SteppingDesign) -> PlainRow? { rows.of(design) }

    /// Registers `rows` (the tool's `main`, as ``DirectRow/register(_:)``): one per peer.
    public static func register(_ new: [PlainRow]) { rows.register(new) }

    private static let rows = PeerRows<PlainRow>(what: "a plain program") { $0.peer }

    /// A value handed to the program's thread as it is (an upstream is not `Sendable` in
    /// OpenCombine 0.14.0; the program subscribes it once, on the thread it is handed to).
    public struct Handed<Value>: @unchecked Sendable {
        public let value: Value
    }
}

/// `plain-sync` and `plain-upstream`: a peer's plain program (``PlainRow``) over `(0..<n).publisher`
/// or over sync-step's upstream, checked as every scenario is (every element once, in order).
enum PlainSync {
    static func run(design: SteppingDesign, elements n: Int, onSuiteUpstream: Bool) throws -> RepetitionResult {
        let scenario = onSuiteUpstream ? "plain-upstream" : "plain-sync"
        guard let row = PlainRow.of(design) else {
            throw ScenarioFailure("\(scenario): '\(design)' has no plain program (only peers registered with one have)")
        }
        let check = OrderCheck()
        let what = "\(scenario) \(design)"
        let upstream = onSuiteUpstream ? CountingUpstream(count: n) : nil
        let source: PlainRow.Source = upstream.map { .suite($0.eraseToAnyPublisher()) } ?? .sequence(n)
        var meter = Meter()
        try meter.start()
        try MeasuredWindow.run {
            row.program(PlainRow.Handed(value: source)) { check.see($0) }
        }
        try meter.stop()
        check.finish()
        try check.verify(count: n, what: what)
        if let upstream {
            try verify(upstream.conduit?.violations.isEmpty == true, "\(what): upstream saw a demand violation")
        }
        return RepetitionResult(meter: meter, elements: n)
    }
}

extension ScenarioDeclaration {
    // A plain program is compared to its peer's direct row, not to a floor.
    static let plainSync = ScenarioDeclaration(
        summary:
            "a peer's library in a plain program as its users write it: on (0..<n).publisher, started and awaited as a user's code is (beside its direct row)",
        isFloor: false, threads: .one, hasLatency: false, elements: (quick: 200_000, full: 1_000_000, suite: 10_000),
        aloneAtOneThread: true, primary: .nsPerElement, roles: [.plain]
    ) { subject, _, elements in
        try PlainSync.run(
            design: ScenarioDeclaration.stepping(subject, "plain-sync"), elements: elements, onSuiteUpstream: false)
    }

    static let plainUpstream = ScenarioDeclaration(
        summary:
            "the same plain program on sync-step's upstream: against plain-sync, what the upstream accounts for; against direct-sync, the rest",
        isFloor: false, threads: .one, hasLatency: false, elements: (quick: 200_000, full: 1_000_000, suite: 10_000),
        aloneAtOneThread: true, primary: .nsPerElement, roles: [.plainUpstream]
    ) { subject, _, elements in
        try PlainSync.run(
            design: ScenarioDeclaration.stepping(subject, "plain-upstream"), elements: elements, onSuiteUpstream: true)
    }
}
