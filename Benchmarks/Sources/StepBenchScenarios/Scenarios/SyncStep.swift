@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance

/// `sync-step`: one thread; the suite's trampolined synchronous upstream; the stepper fulfils
/// `.more` synchronously. Pure per-element cost of a design. Floor: `floor-sync`.
public enum SyncStep {
    /// Builds a stepping subscriber around the scenario's stepper.
    public typealias MakeSubscriber = (@escaping @Sendable (StepEvent<Int, Never>) -> Void) -> any SteppingSubscriber<
        Int, Never
    >

    /// A design through `step`, as its users call it (`publisher.step(design:)`): a design that
    /// subscribes itself (a peer) meets the upstream directly, not through a relay subscriber.
    static func run(design: SteppingDesign, elements n: Int) throws -> RepetitionResult {
        try run(name: design.rawValue, elements: n) { upstream, stepper in design.step(upstream, with: stepper) }
    }

    /// The scenario for any stepping subscriber, not only the built-in designs: the regression
    /// tests measure a test-only design through it.
    public static func run(name design: String, elements n: Int, makeSubscriber: MakeSubscriber) throws
        -> RepetitionResult
    {
        try run(name: design, elements: n) { upstream, stepper in
            let subscriber = makeSubscriber(stepper)
            upstream.subscribe(subscriber)
            return AnyCancellable(subscriber)
        }
    }

    private static func run(
        name design: String, elements n: Int,
        subscribe: (CountingUpstream, @escaping @Sendable (StepEvent<Int, Never>) -> Void) -> AnyCancellable
    ) throws -> RepetitionResult {
        let upstream = CountingUpstream(count: n)
        let check = OrderCheck()
        let stepper: @Sendable (StepEvent<Int, Never>) -> Void = { event in
            switch event {
            case .input(let value, let promise):
                check.see(value)
                promise(.more)
            case .completion: check.finish()
            }
        }
        var meter = Meter()
        try meter.start()
        // The wait is inside the window: an asynchronous design does the work on its own thread.
        var ended: UInt64 = 0
        var cancellable: AnyCancellable?
        try MeasuredWindow.run {
            cancellable = subscribe(upstream, stepper)
            ended = try check.waitFinished(what: "sync-step \(design)")
        }
        try meter.stop(endedAt: ended)
        withExtendedLifetime(cancellable) {}
        try check.verify(count: n, what: "sync-step \(design)")
        try verify(upstream.conduit?.violations.isEmpty == true, "sync-step \(design): upstream saw a demand violation")
        return RepetitionResult(meter: meter, elements: n)
    }
}

/// `floor-sync`: the same upstream into a plain subscriber that returns `.max(1)` per input —
/// no stepping, no promise, no synchronisation. The physical limit for `sync-step`.
enum FloorSync {
    final class MaxOneSink: Subscriber, @unchecked Sendable {  // called serially by upstream
        typealias Input = Int
        typealias Failure = Never
        let check: OrderCheck
        let combineIdentifier = CombineIdentifier()
        init(check: OrderCheck = OrderCheck()) { self.check = check }
        func receive(subscription: any Subscription) { subscription.request(.max(1)) }
        func receive(_ input: Int) -> Subscribers.Demand {
            check.see(input)
            return .max(1)
        }
        func receive(completion: Subscribers.Completion<Never>) { check.finish() }
    }

    static func run(elements n: Int) throws -> RepetitionResult {
        let upstream = CountingUpstream(count: n)
        let sink = MaxOneSink()
        var meter = Meter()
        try meter.start()
        var ended: UInt64 = 0
        try MeasuredWindow.run {
            upstream.subscribe(sink)
            ended = try sink.check.waitFinished(what: "floor-sync")
        }
        try meter.stop(endedAt: ended)
        try sink.check.verify(count: n, what: "floor-sync")
        return RepetitionResult(meter: meter, elements: n)
    }
}

extension ScenarioDeclaration {
    static let syncStep = ScenarioDeclaration(
        summary: "one thread, synchronous upstream, .more inside the stepper: pure per-element cost",
        isFloor: false, floor: .floorSync, threads: .one, hasLatency: false,
        elements: (quick: 200_000, full: 1_000_000, suite: 10_000), aloneAtOneThread: true,
        primary: .ratioToFloor, roles: [.perElement, .abtest, .profiled]
    ) { subject, _, elements in
        try SyncStep.run(design: ScenarioDeclaration.stepping(subject, "sync-step"), elements: elements)
    }

    static let floorSync = ScenarioDeclaration(
        summary: "floor: the sync-step upstream into a plain .max(1) subscriber (no stepping)",
        isFloor: true, threads: .one, hasLatency: false, aloneAtOneThread: true, primary: .nsPerElement,
        roles: [.profiled]
    ) { _, _, elements in try FloorSync.run(elements: elements) }

    static let floorStep = ScenarioDeclaration(
        summary:
            "floor: sync-step into floor-step, the stepping API with no synchronisation (one thread only): the API's cost",
        isFloor: true, threads: .one, hasLatency: false, elements: (quick: 200_000, full: 1_000_000, suite: 10_000),
        aloneAtOneThread: true, primary: .nsPerElement, roles: [.apiFloor, .profiled]
    ) { _, _, elements in
        try SyncStep.run(name: "floor-step", elements: elements) { FloorStep.makeSubscriber(stepper: $0) }
    }
}
