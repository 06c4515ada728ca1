import Foundation
@preconcurrency import OpenCombine

/// A scripted upstream's subscription: records every `request` and `cancel`, with the thread
/// each came from, and optionally re-enters the subscriber from inside `request` or `cancel`.
package final class RecordingSubscription: Subscription, @unchecked Sendable {  // all state behind `lock`
    package enum Call: Equatable, CustomStringConvertible {
        case request(Subscribers.Demand)
        case cancel
        package var description: String {
            switch self {
            case .request(let d): "request(\(d))"
            case .cancel: "cancel"
            }
        }
    }

    private let lock = NSLock()
    private var _calls: [Call] = []
    private var _requestThreads: [pthread_t] = []
    private var _onRequest: (@Sendable (Subscribers.Demand) -> Void)?
    private var _onCancel: (@Sendable () -> Void)?
    package let name: String

    package init(name: String = "upstream") { self.name = name }

    /// Called after a request is recorded, outside the recorder's lock (re-entrancy probe).
    package var onRequest: (@Sendable (Subscribers.Demand) -> Void)? {
        get { lock.withLock { _onRequest } }
        set { lock.withLock { _onRequest = newValue } }
    }
    package var onCancel: (@Sendable () -> Void)? {
        get { lock.withLock { _onCancel } }
        set { lock.withLock { _onCancel = newValue } }
    }

    package var calls: [Call] { lock.withLock { _calls } }
    package var requestThreads: [pthread_t] { lock.withLock { _requestThreads } }
    package var requests: Int { calls.filter { if case .request = $0 { true } else { false } }.count }
    package var cancels: Int { calls.filter { $0 == .cancel }.count }

    package func request(_ demand: Subscribers.Demand) {
        let hook = lock.withLock {
            _calls.append(.request(demand))
            _requestThreads.append(pthread_self())
            return _onRequest
        }
        hook?(demand)
    }

    package func cancel() {
        let hook = lock.withLock {
            _calls.append(.cancel)
            return _onCancel
        }
        hook?()
    }
}
