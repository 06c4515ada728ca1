import Foundation
@preconcurrency import OpenCombine
@_spi(Measurement) import Stepping

/// The rules against OpenCombine's own publishers, through the public `step` operator.
enum RealUpstreamChecks {
    /// Collects what `step` delivers; fulfils each promise as told.
    final class Collector<Input: Sendable>: @unchecked Sendable {  // behind `lock`
        let lock = NSLock()
        var inputs: [Input] = []
        var completion: Subscribers.Completion<TestError>?
        var completions = 0
        var promises: [StepPromise] = []
        func stepper(more: Bool) -> @Sendable (StepEvent<Input, TestError>) -> Void {
            { event in
                switch event {
                case .input(let v, let promise):
                    self.lock.withLock {
                        self.inputs.append(v); self.promises.append(promise)
                    }
                    if more { promise(.more) }
                case .completion(let c):
                    self.lock.withLock {
                        self.completion = c; self.completions += 1
                    }
                }
            }
        }
        var snapshot: ([Input], Int, Subscribers.Completion<TestError>?) {
            lock.withLock { (inputs, completions, completion) }
        }
    }

    /// Publishers.Sequence: every element in order, then finished (D1, D3, S1, C1)
    static func sequencePublisher(design: SteppingDesign) {
        let c = Collector<Int>()
        let cancellable = (0..<1_000).publisher.setFailureType(to: TestError.self)
            .step(design: design, with: c.stepper(more: true))
        expectSoon({ c.snapshot.1 }, equals: 1, "completions")
        expectEqual(c.snapshot.0, Array(0..<1_000), "inputs")
        expectEqual(c.snapshot.2, .finished, "completion")
        cancellable.cancel()
    }

    /// Just, Empty, Fail: completion delivered exactly once (C1)
    static func justEmptyFail(design: SteppingDesign) {
        let just = Collector<String>()
        let a = Just("x").setFailureType(to: TestError.self).step(design: design, with: just.stepper(more: false))
        expectSoon({ just.snapshot.1 }, equals: 1, "completions")
        expectEqual(just.snapshot.0, ["x"], "inputs")
        expectEqual(just.snapshot.2, .finished, "completion")

        let empty = Collector<Int>()
        let b = Empty<Int, TestError>().step(design: design, with: empty.stepper(more: true))
        expectSoon({ empty.snapshot.1 }, equals: 1, "completions")
        expectEqual(empty.snapshot.0, [], "inputs")

        let fail = Collector<Int>()
        let f = Fail<Int, TestError>(error: TestError(code: 3)).step(design: design, with: fail.stepper(more: true))
        expectSoon({ fail.snapshot.1 }, equals: 1, "completions")
        expectEqual(fail.snapshot.2, .failure(TestError(code: 3)), "completion")
        settleAll()
        expectEqual(
            [just.snapshot.1, empty.snapshot.1, fail.snapshot.1], [1, 1, 1], "completions of Just, Empty, Fail")
        _ = (a, b, f)
    }

    /// PassthroughSubject behind buffer: one at a time, in order, none lost (D2, S1, D4)
    static func bufferedSubjectWithAsyncMore(design: SteppingDesign) {
        let subject = PassthroughSubject<Int, TestError>()
        let c = Collector<Int>()
        let cancellable =
            subject
            .buffer(size: 1_000, prefetch: .byRequest, whenFull: .customError { TestError(code: 99) })
            .step(design: design, with: c.stepper(more: false))
        for v in 0..<100 { subject.send(v) }
        subject.send(completion: .finished)
        // Fulfil each promise from another queue, one at a time.
        let queue = DispatchQueue(label: "fulfiller")
        for i in 0..<100 {
            guard eventually({ c.lock.withLock { c.promises.count } == i + 1 }) else {
                expect(false, "input \(i) never arrived (\(c.lock.withLock { c.promises.count }) inputs in all)")
                break
            }
            let promise = c.lock.withLock { c.promises[i] }
            queue.sync { promise(.more) }
        }
        expectSoon({ c.snapshot.1 }, equals: 1, "completions")
        expectEqual(c.snapshot.0, Array(0..<100), "inputs")
        expectEqual(c.snapshot.2, .finished, "completion")
        cancellable.cancel()
    }

    /// cancelling through AnyCancellable cancels upstream and stops the stepper (C4, S4)
    static func anyCancellableCancels(design: SteppingDesign) {
        let subject = PassthroughSubject<Int, TestError>()
        let c = Collector<Int>()
        // Subscribe first and let an asynchronous design make its first request: a
        // PassthroughSubject drops values sent before there is demand.
        let subscriber: any SteppingSubscriber<Int, TestError> = design.makeSubscriber(stepper: c.stepper(more: true))
        subject.subscribe(subscriber)
        settleDesign(subscriber)
        var cancellable: AnyCancellable? = AnyCancellable(subscriber)
        subject.send(1)
        expectSoon({ c.snapshot.0 }, equals: [1], "inputs")
        cancellable?.cancel()
        cancellable = nil
        subject.send(2)
        subject.send(completion: .finished)
        settleAll()
        expectEqual(c.snapshot.0, [1], "inputs")
        expectEqual(c.snapshot.1, 0, "completions")
    }

    private static func settleAll() { usleep(1_000) }
}
