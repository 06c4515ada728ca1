// Adapted from Rob Mayoff's answer to the Stack Overflow question "Swift Combine: Buffer
// upstream values and emit them at a steady rate?" (2019), licensed under CC BY-SA 4.0
// (https://creativecommons.org/licenses/by-sa/4.0/); this file is distributed under the same
// licence. Changes from the original: see NOTICE.

import Foundation
@preconcurrency import OpenCombine

/// The `seed` design: a faithful port of the original NSLock `SteppingSubscriber` (Rob Mayoff's
/// answer to the Stack Overflow question "Swift Combine: Buffer upstream values and emit them at
/// a steady rate?"), kept as the reference row every report compares to. Do not optimise it,
/// and do not fix it: the rules it breaks are recorded by the tests as known issues
/// (docs/CONFORMANCE.md, "What the original gets wrong").
///
/// As in the original: a generic `State` enum behind an `NSLock`, `l_` fields that may only be
/// touched while holding the lock, a heap-allocated closure per promise, and `lock.sync`
/// returning an action closure that is run after unlocking. Changes from the original are the
/// ones the public API requires: the promise is wrapped in ``StepPromise``, the stepper and
/// promise are `@Sendable`, the promise id is 64 bits, and OpenCombine replaces Combine.
@usableFromInline
final class SeedSteppingSubscriber<Input, Failure: Error>: SteppingSubscriber,
    @unchecked Sendable  // every `l_` field is only touched while holding `lock`.
{
    @usableFromInline
    init(stepper: @escaping Stepper) {
        l_state = .subscribing(stepper)
    }

    @usableFromInline typealias Stepper = @Sendable (StepEvent<Input, Failure>) -> Void
    typealias Promise = @Sendable (StepRequest) -> Void
    typealias Completion = Subscribers.Completion<Failure>

    private let lock = NSLock()
    // The l_ prefix means it must only be accessed while holding the lock.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private var l_state: State
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private var l_nextPromiseId: PromiseId = 1

    private typealias PromiseId = UInt64
    private var noPromiseId: PromiseId { 0 }

    private enum State {
        // Completed or cancelled.
        case dead
        // Waiting for Subscription from upstream.
        case subscribing(Stepper)
        // Waiting for a signal from upstream or for the latest promise to be completed.
        case subscribed(Subscribed)
        // Calling out to the stepper.
        case stepping(Stepping)

        var subscription: (any Subscription)? {
            switch self {
            case .dead: return nil
            case .subscribing(_): return nil
            case .subscribed(let subscribed): return subscribed.subscription
            case .stepping(let stepping): return stepping.subscribed.subscription
            }
        }

        struct Subscribed {
            var stepper: Stepper
            var subscription: any Subscription
            var validPromiseId: PromiseId
        }

        struct Stepping {
            var subscribed: Subscribed
            // If the stepper completes the current promise synchronously with .more,
            // I set this to true.
            var shouldRequestMore: Bool
        }
    }

    // MARK: Cancellable

    @usableFromInline
    func cancel() {
        let sub: (any Subscription)? = lock.sync {
            defer { l_state = .dead }
            return l_state.subscription
        }
        sub?.cancel()
    }

    // MARK: Subscriber

    @usableFromInline
    func receive(subscription: any Subscription) {
        let action: () -> Void = lock.sync {
            guard case .subscribing(let stepper) = l_state else {
                return { subscription.cancel() }
            }
            l_state = .subscribed(
                .init(
                    stepper: stepper, subscription: subscription,
                    validPromiseId: noPromiseId))
            return { subscription.request(.max(1)) }
        }
        action()
    }

    @usableFromInline
    func receive(completion: Subscribers.Completion<Failure>) {
        let action: (() -> Void)? = lock.sync {
            // The only state in which I have to handle this call is .subscribed:
            // - If I'm .dead, either upstream already completed (and shouldn't call this
            //   again), or I've been cancelled.
            // - If I'm .subscribing, upstream must send me a Subscription before sending me a
            //   completion.
            // - If I'm .stepping, upstream is currently signalling me and isn't allowed to
            //   signal me again concurrently.
            guard case .subscribed(let subscribed) = l_state else {
                return nil
            }
            l_state = .dead
            return { [stepper = subscribed.stepper] in
                stepper(.completion(completion))
            }
        }
        action?()
    }

    @usableFromInline
    func receive(_ input: Input) -> Subscribers.Demand {
        let action: (() -> Subscribers.Demand)? = lock.sync {
            // The only state in which I have to handle this call is .subscribed (see above).
            guard case .subscribed(var subscribed) = l_state else {
                return nil
            }
            let promiseId = l_nextPromiseId
            l_nextPromiseId += 1
            let promise: Promise = { request in
                self.completePromise(id: promiseId, request: request)
            }
            subscribed.validPromiseId = promiseId
            l_state = .stepping(.init(subscribed: subscribed, shouldRequestMore: false))
            return { [stepper = subscribed.stepper] in
                stepper(.input(input, StepPromise(promise)))
                let demand: Subscribers.Demand = self.lock.sync {
                    // The only possible states now are .stepping and .dead.
                    guard case .stepping(let stepping) = self.l_state else {
                        return .none
                    }
                    self.l_state = .subscribed(stepping.subscribed)
                    return stepping.shouldRequestMore ? .max(1) : .none
                }
                return demand
            }
        }
        return action?() ?? .none
    }

    // MARK: Promise

    private func completePromise(id: PromiseId, request: StepRequest) {
        let action: (() -> Void)? = lock.sync {
            switch l_state {
            case .dead, .subscribing(_): return nil
            case .subscribed(var subscribed) where subscribed.validPromiseId == id && request == .more:
                subscribed.validPromiseId = noPromiseId
                l_state = .subscribed(subscribed)
                return { [sub = subscribed.subscription] in
                    sub.request(.max(1))
                }
            case .subscribed(let subscribed) where subscribed.validPromiseId == id && request == .cancel:
                l_state = .dead
                return { [sub = subscribed.subscription] in
                    sub.cancel()
                }
            case .subscribed(_):
                // Multiple completion or stale promise.
                return nil
            case .stepping(var stepping) where stepping.subscribed.validPromiseId == id && request == .more:
                stepping.subscribed.validPromiseId = noPromiseId
                stepping.shouldRequestMore = true
                l_state = .stepping(stepping)
                return nil
            case .stepping(let stepping) where stepping.subscribed.validPromiseId == id && request == .cancel:
                l_state = .dead
                return { [sub = stepping.subscribed.subscription] in
                    sub.cancel()
                }
            case .stepping(_):
                // Multiple completion or stale promise.
                return nil
            }
        }
        action?()
    }
}

extension NSLock {
    @inline(__always)
    fileprivate func sync<Answer>(_ body: () -> Answer) -> Answer {
        lock()
        defer { unlock() }
        return body()
    }
}

extension SteppingDesign {
    /// Faithful port of the original NSLock subscriber: closures for promises and actions (two
    /// heap allocations per element). The reference row; kept as written, flaws included.
    @inlinable public static var seed: SteppingDesign { SteppingDesign(id: .seed) }

    static let seedDescription = Description(
        name: "seed",
        traits: Traits(
            allocatesPerTransition: true,
            knownIssues: [
                .init(
                    .s1, "an input sent with no demand outstanding reaches the stepper while its promise is unfulfilled"
                ),
                .init(
                    .c6,
                    "a completion delivered from inside the stepper call is dropped (a cancel that follows it still goes upstream), and the stepper and subscription stay referenced"
                ),
                .init(
                    .r3,
                    "the stepper is released while the lock is held: a deinit that calls back into the subscriber deadlocks"
                ),
            ]))
}
