@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// A library consuming a publisher with no stepper contract: what a peer's users write when
/// their work per input is synchronous (a bare `for await` loop over `.values`, `flatMap` with a
/// `Future` and a `sink`, a channel drained by a bare loop). Declared beside the peer it stands
/// for and registered with the tool (``DirectRow``), so that `direct-sync` measures it on
/// sync-step's upstream and the peer's cost splits into its library's (the direct row) and its
/// bridge to the stepper contract (the peer's sync-step row minus the direct row).
public struct DirectRow: Sendable {
    /// Consumes `upstream` (type-erased at `subscribe` only: inputs reach the library's own
    /// subscriber directly), calling `each` with every input in order and `end` at the end.
    public typealias Consume =
        @Sendable (
            _ upstream: AnyPublisher<Int, Never>, _ each: @escaping @Sendable (Int) -> Void,
            _ end: @escaping @Sendable () -> Void
        ) -> AnyCancellable

    /// The peer (a design that subscribes itself) whose library this row measures without it.
    public let peer: SteppingDesign
    let consume: Consume

    public init(of peer: SteppingDesign, consume: @escaping Consume) {
        self.peer = peer
        self.consume = consume
    }

    /// The rows this process registered (``register(_:)``), in the order they were registered.
    public static var registered: [DirectRow] { rows.registered }

    /// The direct row of `design`, if one was registered.
    public static func of(_ design: SteppingDesign) -> DirectRow? { rows.of(design) }

    /// Registers `rows` (the tool's `main`, before any command runs: a measuring child registers
    /// the same rows, as it describes the same designs). A peer has one direct row: a second
    /// registration for it stops the process, naming it.
    public static func register(_ new: [DirectRow]) { rows.register(new) }

    private static let rows = PeerRows<DirectRow>(what: "a direct row") { $0.peer }
}

/// Rows a process registers per peer (a direct row, a plain program), once each, before any
/// command runs: the tool's `main` registers them, and a measuring child, which runs the same
/// `main`, registers the same.
final class PeerRows<Row: Sendable>: Sendable {
    private let rows = Mutex<[Row]>([])
    private let what: String
    private let peer: @Sendable (Row) -> SteppingDesign

    init(what: String, peer: @escaping @Sendable (Row) -> SteppingDesign) {
        self.what = what
        self.peer = peer
    }

    var registered: [Row] { rows.withLock { $0 } }

    func of(_ design: SteppingDesign) -> Row? { registered.first { peer($0) == design } }

    /// Appends `new`; a peer registered twice stops the process, naming it.
    func register(_ new: [Row]) {
        rows.withLock { rows in
            for row in new {
                precondition(
                    !rows.contains { peer($0) == peer(row) }, "'\(peer(row))' has \(what) already")
                rows.append(row)
            }
        }
    }
}

/// `direct-sync`: sync-step's upstream consumed by a peer's library directly (``DirectRow``):
/// the work per input is sync-step's (the order check), with no promise and no stepper. The
/// upstream is held to sync-step's demand (one input outstanding, as every peer asks): a library
/// that asked ahead would be faster for a reason its peer cannot share.
enum DirectSync {
    static func run(design: SteppingDesign, elements n: Int) throws -> RepetitionResult {
        guard let row = DirectRow.of(design) else {
            throw ScenarioFailure("direct-sync: '\(design)' has no direct row (only peers registered with one have)")
        }
        let upstream = CountingUpstream(count: n)
        let check = OrderCheck()
        let what = "direct-sync \(design)"
        var meter = Meter()
        try meter.start()
        var ended: UInt64 = 0
        var cancellable: AnyCancellable?
        try MeasuredWindow.run {
            cancellable = row.consume(upstream.eraseToAnyPublisher(), { check.see($0) }, { check.finish() })
            ended = try check.waitFinished(what: what)
        }
        try meter.stop(endedAt: ended)
        withExtendedLifetime(cancellable) {}
        try check.verify(count: n, what: what)
        try verify(upstream.conduit?.violations.isEmpty == true, "\(what): upstream saw a demand violation")
        return RepetitionResult(meter: meter, elements: n)
    }
}

extension ScenarioDeclaration {
    // A direct row is a peer's library alone: it is compared to its peer, not to a floor.
    static let directSync = ScenarioDeclaration(
        summary:
            "a peer's library on sync-step's upstream with no stepper contract (its bare loop): the peer's sync-step minus this is its bridge",
        isFloor: false, threads: .one, hasLatency: false, elements: (quick: 200_000, full: 1_000_000, suite: 10_000),
        aloneAtOneThread: true, primary: .nsPerElement, roles: [.direct, .profiled]
    ) { subject, _, elements in
        try DirectSync.run(design: ScenarioDeclaration.stepping(subject, "direct-sync"), elements: elements)
    }
}
