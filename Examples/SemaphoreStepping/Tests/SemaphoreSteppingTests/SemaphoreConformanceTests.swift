import Foundation
@preconcurrency import OpenCombine
import SemaphoreStepping
import Stepping
import SteppingConformanceTesting
import Testing

/// The conformance kit on the semaphore design, every rule by its id (`swift test --filter
/// "rule"` lists them), through public products only; then what the kit says of designs that
/// break a rule or claim a break they do not show.
@Suite("The semaphore design through the conformance kit")
struct SemaphoreConformanceTests {
    @Test("rule", arguments: Conformance.rules)
    func test_rule(rule: SteppingRule) {
        expectConformance(rule, of: .semaphore, configuration: Conformance.Configuration(s5Elements: 100_000))
    }

    @Test("a design that breaks a rule fails it, by rule id")
    func test_brokenDesignFailsItsRule() {
        // The semaphore design with D3 broken: a .more fulfilled inside the stepper is requested
        // instead of returned as demand.
        let result = Conformance.run(.d3, on: .eagerRequest)
        #expect(result.verdict == .failed, "\(result)")
        #expect(!result.conforms)
        #expect(result.description.contains("eager-request D3"), "\(result)")
        // the rules it keeps still pass: the failure is D3's alone
        #expect(Conformance.run(.d1, on: .eagerRequest).verdict == .passed)
    }

    @Test("a known issue that is not shown is reported as such")
    func test_staleKnownIssue() {
        let claimed = SteppingDesign(
            name: "semaphore-claiming-s2",
            traits: .init(knownIssues: [.init(.s2, "claimed, but not true")]), factory: SemaphoreFactory())
        let result = Conformance.run(.s2, on: claimed)
        #expect(result.verdict == .knownIssueNotShown)
        #expect(!result.conforms)
    }

    @Test("an outside design is itself: equal only to itself, found by its name, Codable by its name")
    func test_identity() throws {
        #expect(SteppingDesign.semaphore == .semaphore)
        #expect(SteppingDesign.semaphore != .default)
        #expect(Set([SteppingDesign.semaphore, .semaphore, .default]).count == 2)
        #expect(SteppingDesign(rawValue: "semaphore") == .semaphore)
        #expect(SteppingDesign.semaphore.traits.delivery == .synchronous)
        let decoded = try JSONDecoder().decode(
            [SteppingDesign].self, from: JSONEncoder().encode([SteppingDesign.semaphore, .default]))
        #expect(decoded == [.semaphore, .default])
    }

    @Test("describing a design with a name already taken stops the process, naming it")
    func test_takenNameStops() async {
        await #expect(processExitsWith: .failure) {
            _ = SteppingDesign(name: SteppingDesign.default.name, factory: SemaphoreFactory())
        }
        await #expect(processExitsWith: .failure) {
            _ = SteppingDesign(name: "twice", factory: SemaphoreFactory())
            _ = SteppingDesign(name: "twice", factory: SemaphoreFactory())
        }
    }

    @Test("step(design:) takes an outside design")
    func test_step() {
        let seen = LockedArray()
        let cancellable = (1...100).publisher.step(design: .semaphore) { event in
            if case .input(let value, let promise) = event {
                seen.append(value)
                promise(.more)
            }
        }
        #expect(seen.values == Array(1...100))
        withExtendedLifetime(cancellable) {}
    }
}

/// The semaphore design, but a `.more` given during the stepper call is requested from upstream
/// at once instead of returned as demand: breaks D3 (and D2: two requests outstanding).
struct EagerRequestFactory: SteppingSubscriberFactory {
    func makeSubscriber<Input, Failure: Error>(
        stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void
    ) -> any SteppingSubscriber<Input, Failure> {
        EagerRequestSubscriber(SemaphoreSubscriber(stepper: stepper))
    }
}

final class EagerRequestSubscriber<Input, Failure: Error>: SteppingSubscriber, @unchecked Sendable {
    let inner: SemaphoreSubscriber<Input, Failure>
    var subscription: (any Subscription)?
    init(_ inner: SemaphoreSubscriber<Input, Failure>) { self.inner = inner }
    convenience init(stepper: @escaping @Sendable (StepEvent<Input, Failure>) -> Void) {
        self.init(SemaphoreSubscriber(stepper: stepper))
    }
    func receive(subscription: any Subscription) {
        self.subscription = subscription
        inner.receive(subscription: subscription)
    }
    func receive(_ input: Input) -> Subscribers.Demand {
        let demand = inner.receive(input)
        if demand != .none { subscription?.request(demand) }
        return .none
    }
    func receive(completion: Subscribers.Completion<Failure>) { inner.receive(completion: completion) }
    func cancel() { inner.cancel() }
}

extension SteppingDesign {
    static let eagerRequest = SteppingDesign(name: "eager-request", factory: EagerRequestFactory())
}

final class LockedArray: @unchecked Sendable {  // `storage` behind `lock`
    private let lock = NSLock()
    private var storage: [Int] = []
    func append(_ value: Int) { lock.withLock { storage.append(value) } }
    var values: [Int] { lock.withLock { storage } }
}
