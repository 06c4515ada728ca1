import Foundation
@preconcurrency import OpenCombine
@_spi(StepBench) import SteppingConformance
import TestSupport
import Testing

@_spi(Measurement) @testable import Stepping

/// A `receive(_:)` gives its caller back: upstream sends each input from one of several threads,
/// and no caller is kept to step the inputs the others send (the `actor` design's drain used
/// to step every input queued behind it while it ran, so the first sender's call returned only
/// when the stream paused: for an endless stream, never).
///
/// Made certain, not left to timing: the upstream's `request` hands the next input to the next
/// sender thread and returns only once that sender's `receive(_:)` has returned, so a design
/// that requests from inside its own drain always finds the next input queued behind it.
@Suite("A receive(_:) gives its caller back")
struct CallerTests {
    static let inputs = 400
    static let senders = 4
    /// The most stepper calls one `receive(_:)` may make on its caller's thread: its own input
    /// (a synchronous design makes only that one) and, in `actor`, at most its drain's share of
    /// other threads' signals (``StepMailbox/drainShare``) before it hands the rest on.
    static let bound = 1 + StepMailbox<Int, Never>.drainShare

    @Test("inputs sent from 4 threads: each receive(_:) steps a bounded number of them", arguments: testedDesigns)
    func test_receiveReturnsAfterBoundedWork(design: SteppingDesign) throws {
        let relay = Relay(inputs: Self.inputs, senders: Self.senders)
        let seen = Box<[Int]>([])
        let stepsOnThread = Box<[UInt: Int]>([:])  // stepper calls per thread
        let subscriber: any SteppingSubscriber<Int, Never> = design.makeSubscriber { event in
            guard case .input(let value, let promise) = event else { return }
            stepsOnThread.mutate { $0[DrainExecutor.currentThreadID, default: 0] += 1 }
            seen.mutate { $0.append(value) }
            promise(.more)
        }
        nonisolated(unsafe) let target = subscriber  // subscribers are thread-safe by contract
        let most = Box(0)  // the most stepper calls one receive(_:) made on its caller's thread
        let threads = (0..<Self.senders).map { _ in
            Thread {
                let me = DrainExecutor.currentThreadID
                while let input = relay.nextInput() {
                    let before = stepsOnThread.value[me, default: 0]
                    let demand = target.receive(input)
                    let made = stepsOnThread.value[me, default: 0] - before
                    most.mutate { $0 = max($0, made) }
                    relay.returned(input)
                    if demand > .none { relay.grant(waitingForItsReturn: false) }
                }
            }
        }
        for thread in threads { thread.start() }
        subscriber.receive(subscription: relay)
        let done = eventually(timeout: 60) { seen.value.count == Self.inputs }
        relay.stop()
        subscriber.cancel()
        SteppingDesign.waitUntilIdle(subscriber)
        #expect(done, "\(design.id): \(seen.value.count) of \(Self.inputs) inputs stepped in 60 s")
        #expect(seen.value == Array(0..<seen.value.count), "\(design.id): inputs stepped out of order")
        #expect(
            most.value <= Self.bound,
            "\(design.id): one receive(_:) made \(most.value) stepper calls on its caller's thread (at most \(Self.bound): its own input and a fair share of the others')"
        )
        #expect(relay.waitsTimedOut == 0, "\(design.id): a sender's receive(_:) did not return within 10 s")
    }

    /// The upstream: each input it grants goes to whichever sender thread is waiting for one
    /// (never to one still inside `receive(_:)`). `request` grants the next input and waits (at
    /// most 10 s) until its sender's `receive(_:)` has returned; demand returned from
    /// `receive(_:)` grants the next one without waiting.
    final class Relay: Subscription, @unchecked Sendable {  // all state behind `state`'s lock
        struct State {
            var next = 0
            var granted: [Int] = []
            var returned = Set<Int>()
            var stopped = false
            var waitsTimedOut = 0
        }
        let combineIdentifier = CombineIdentifier()
        let inputs: Int
        /// The kit's `Box` (an NSLock), not a `Mutex`: ThreadSanitizer cannot see `Mutex`'s futex.
        private let state = Box(State())
        private let wake = DispatchSemaphore(value: 0)
        private let senders: Int

        init(inputs: Int, senders: Int) {
            self.inputs = inputs
            self.senders = senders
        }

        func request(_ demand: Subscribers.Demand) {
            precondition(demand == .max(1), "a stepping subscriber asks for one input at a time")
            grant(waitingForItsReturn: true)
        }

        func cancel() { stop() }

        func grant(waitingForItsReturn wait: Bool) {
            let granted = state.mutate { s -> Int? in
                guard !s.stopped, s.next < inputs else { return nil }
                defer { s.next += 1 }
                s.granted.append(s.next)
                return s.next
            }
            guard let granted else { return }
            wake.signal()
            guard wait else { return }
            let deadline = Date().addingTimeInterval(10)
            while !state.value.returned.contains(granted) && !state.value.stopped {
                if Date() > deadline {
                    state.mutate { $0.waitsTimedOut += 1 }
                    return
                }
                usleep(20)
            }
        }

        /// The next input granted, for the sender thread that calls; nil once the relay stopped.
        func nextInput() -> Int? {
            while true {
                wake.wait()
                let taken = state.mutate { s -> Int?? in
                    if s.stopped { return .some(nil) }
                    return s.granted.isEmpty ? nil : s.granted.removeFirst()
                }
                if let taken { return taken }
            }
        }

        func returned(_ input: Int) { state.mutate { _ = $0.returned.insert(input) } }

        func stop() {
            let first = state.mutate { s -> Bool in
                defer { s.stopped = true }
                return !s.stopped
            }
            if first { for _ in 0..<senders { wake.signal() } }
        }

        var waitsTimedOut: Int { state.value.waitsTimedOut }
    }
}
