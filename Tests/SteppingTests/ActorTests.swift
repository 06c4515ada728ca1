import Dispatch
import Foundation
@preconcurrency import OpenCombine
import SteppingConformance
import TestSupport
import Testing

@_spi(Measurement) @testable import Stepping

/// What the two actor designs do with a flood: an upstream that ignores demand, sending while
/// the stepper runs, has every input dropped at once on its own thread (rule S1, as the other
/// designs drop them), so nothing is queued and the mailbox's memory does not grow with it.
@Suite("The actors: a flood is dropped at once")
struct ActorFloodTests {
    /// The mailbox's own account, "N queued, …".
    static func queued(_ subscriber: AnyObject) -> Int? {
        let text =
            (subscriber as? ActorSteppingSubscriber<Int, Never>)?.mailboxDescription
            ?? (subscriber as? ActorStreamSteppingSubscriber<Int, Never>)?.mailboxDescription
        return text.flatMap { Int($0.prefix { $0.isNumber }) }
    }

    @Test(
        "4,000 inputs sent with no demand while the stepper runs: none queued, none reaches the stepper",
        arguments: [SteppingDesign.actor, .actorStream])
    func test_floodIsDroppedAtOnce(design: SteppingDesign) throws {
        let inStepper = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let seen = Box<[Int]>([])
        let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
            guard case .input(let value, let promise) = event else { return }
            seen.mutate { $0.append(value) }
            if value == 0 {
                inStepper.signal()
                release.wait()
            }
            promise(.more)
        }
        let upstream = RecordingSubscription()
        subscriber.receive(subscription: upstream)
        nonisolated(unsafe) let feeding = subscriber  // subscribers are thread-safe by contract
        Thread.detachNewThread { _ = feeding.receive(0) }
        #expect(inStepper.wait(timeout: .now() + 10) == .success)
        let before = try #require(Self.queued(subscriber))  // actor-stream counts the input it handles
        for i in 1...4_000 { _ = subscriber.receive(i) }  // the flood: no demand outstanding
        #expect(try #require(Self.queued(subscriber)) == before, "the flood was queued")
        release.signal()
        #expect(eventually { upstream.calls == [.request(.max(1)), .request(.max(1))] }, "\(upstream.calls)")
        _ = subscriber.receive(4_001)  // the input the second request asked for
        SteppingDesign.waitUntilIdle(subscriber)
        #expect(seen.value == [0, 4_001])
        subscriber.cancel()
    }
}
