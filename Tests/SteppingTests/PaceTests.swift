import Foundation
@preconcurrency import OpenCombine
import OpenCombineDispatch
import TestSupport
import Testing

@testable import Stepping

/// `pace` on a virtual-time scheduler, the ImmediateScheduler and a real DispatchQueue.
@Suite("pace(_:scheduler:subject:design:)")
struct PaceTests {
    final class Output: @unchecked Sendable {  // behind `lock`
        let lock = NSLock()
        var items: [(String, Double)] = []
        var finishedAt: Double?
    }

    @Test(
        "the original example: A B C at 0, 0.3, 0.6 s and D E F at 5.0, 5.3, 5.6 s come out at 0, 1, 2, 5, 6, 7 s",
        arguments: testedDesigns)
    func test_pace_originalExampleInVirtualTime(design: SteppingDesign) {
        let scheduler = TestScheduler()
        let erratic = PassthroughSubject<String, Never>()
        let paced = PassthroughSubject<String, Never>()
        let out = Output()
        let sink = paced.sink(
            receiveCompletion: { _ in out.lock.withLock { out.finishedAt = scheduler.now.seconds } },
            receiveValue: { v in out.lock.withLock { out.items.append((v, scheduler.now.seconds)) } })
        // `pace` itself is `step(design:with: makePaceStepper(...))`; holding the subscriber
        // lets the test wait for an asynchronous design after every virtual-time step.
        let pacer: any SteppingSubscriber<String, Never> = design.makeSubscriber(
            stepper: makePaceStepper(.seconds(1), scheduler: scheduler, subject: paced))
        erratic
            .buffer(size: 1000, prefetch: .byRequest, whenFull: .dropOldest)
            .subscribe(pacer)
        let pacing = AnyCancellable(pacer)
        for (value, at) in [("A", 0.0), ("B", 0.3), ("C", 0.6), ("D", 5.0), ("E", 5.3), ("F", 5.6)] {
            scheduler.schedule(after: .init(nanoseconds: Int(at * 1e9)), tolerance: .init(0), options: nil) {
                erratic.send(value)
            }
        }
        scheduler.schedule(after: .init(nanoseconds: 5_700_000_000), tolerance: .init(0), options: nil) {
            erratic.send(completion: .finished)
        }
        // Let asynchronous designs deliver between virtual-time steps.
        settleDesign(pacer)
        for _ in 0..<1_000 {
            scheduler.advance(by: .milliseconds(10))
            settleDesign(pacer)
        }
        let items = out.lock.withLock { out.items }
        #expect(items.map(\.0) == ["A", "B", "C", "D", "E", "F"])
        let times = items.map(\.1)
        #expect(times.count == 6)
        for (got, want) in zip(times, [0.0, 1, 2, 5, 6, 7]) {
            #expect(abs(got - want) < 0.011, "output at \(got) s, expected \(want) s")
        }
        // As in the original, buffer sends the completion only on the next demand: 1 s after F.
        let finished = out.lock.withLock { out.finishedAt }
        #expect(finished.map { abs($0 - 8) < 0.011 } == true, "finished at \(String(describing: finished))")
        withExtendedLifetime((sink, pacing)) {}
    }

    @Test("ImmediateScheduler: every element, in order, then finished", arguments: testedDesigns)
    func test_pace_immediateScheduler(design: SteppingDesign) {
        let paced = PassthroughSubject<Int, Never>()
        let received = Box<[Int]>([])
        let finished = Box(false)
        let sink = paced.sink(
            receiveCompletion: { _ in finished.mutate { $0 = true } },
            receiveValue: { v in received.mutate { $0.append(v) } })
        let pacing = (0..<500).publisher.pace(
            .seconds(1), scheduler: ImmediateScheduler.shared,
            subject: paced, design: design)
        #expect(eventually { finished.value })
        #expect(received.value == Array(0..<500))
        withExtendedLifetime((sink, pacing)) {}
    }

    @Test("DispatchQueue scheduler: outputs at least the interval apart", arguments: testedDesigns)
    func test_pace_dispatchQueueScheduler(design: SteppingDesign) {
        let queue = DispatchQueue(label: "pace")
        let paced = PassthroughSubject<Int, Never>()
        let times = Box<[UInt64]>([])
        let finished = Box(false)
        let sink = paced.sink(
            receiveCompletion: { _ in finished.mutate { $0 = true } },
            receiveValue: { _ in times.mutate { $0.append(DispatchTime.now().uptimeNanoseconds) } })
        let pacing = (0..<5).publisher.pace(
            .milliseconds(20), scheduler: queue.ocombine,
            subject: paced, design: design)
        // 30 s, not the default 5: the whole suite runs in this process, and checks that block
        // libdispatch's workers (R4's hundreds of blocked steppers) can hold this queue's timers
        // back (once on a fresh clone: `seed` had 1 of its 5 outputs after 5 s).
        #expect(eventually(timeout: 30) { finished.value }, "\(times.value.count) of 5 outputs")
        let t = times.value
        #expect(t.count == 5)
        for (a, b) in zip(t, t.dropFirst()) {
            #expect(b - a >= 19_000_000, "outputs \(Double(b - a) / 1e6) ms apart, interval is 20 ms")
        }
        withExtendedLifetime((sink, pacing)) {}
    }
}
