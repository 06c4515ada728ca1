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
        expect(eventually { c.snapshot.1 == 1 })
        expect(c.snapshot.0 == Array(0..<1_000))
        expect(c.snapshot.2 == .finished)
        cancellable.cancel()
    }

    /// Just, Empty, Fail: completion delivered exactly once (C1)
    static func justEmptyFail(design: SteppingDesign) {
        let just = Collector<String>()
        let a = Just("x").setFailureType(to: TestError.self).step(design: design, with: just.stepper(more: false))
        expect(eventually { just.snapshot.1 == 1 })
        expect(just.snapshot.0 == ["x"])
        expect(just.snapshot.2 == .finished)

        let empty = Collector<Int>()
        let b = Empty<Int, TestError>().step(design: design, with: empty.stepper(more: true))
        expect(eventually { empty.snapshot.1 == 1 })
        expect(empty.snapshot.0.isEmpty)

        let fail = Collector<Int>()
        let f = Fail<Int, TestError>(error: TestError(code: 3)).step(design: design, with: fail.stepper(more: true))
        expect(eventually { fail.snapshot.1 == 1 })
        expect(fail.snapshot.2 == .failure(TestError(code: 3)))
        settleAll()
        expect(just.snapshot.1 == 1 && empty.snapshot.1 == 1 && fail.snapshot.1 == 1)
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
        expect(eventually { c.snapshot.1 == 1 })
        expect(c.snapshot.0 == Array(0..<100))
        expect(c.snapshot.2 == .finished)
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
        expect(eventually { c.snapshot.0 == [1] })
        cancellable?.cancel()
        cancellable = nil
        subject.send(2)
        subject.send(completion: .finished)
        settleAll()
        expect(c.snapshot.0 == [1])
        expect(c.snapshot.1 == 0)
    }

    private static func settleAll() { usleep(1_000) }
}
