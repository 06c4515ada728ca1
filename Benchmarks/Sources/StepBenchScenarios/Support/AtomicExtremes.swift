import Synchronization

/// Lowers `atomic` to `value` if it is smaller (cancel-race: the first cancel call).
func storeMinimum(_ value: UInt64, into atomic: borrowing Atomic<UInt64>) {
    store(value, into: atomic, if: <)
}

/// Raises `atomic` to `value` if it is larger (fan-out: the last pipeline's completion).
func storeMaximum(_ value: UInt64, into atomic: borrowing Atomic<UInt64>) {
    store(value, into: atomic, if: >)
}

/// Stores `value` while `better(value, current)` holds: one compare-exchange loop.
private func store(_ value: UInt64, into atomic: borrowing Atomic<UInt64>, if better: (UInt64, UInt64) -> Bool) {
    var current = atomic.load(ordering: .relaxed)
    while better(value, current) {
        let (exchanged, original) = atomic.compareExchange(
            expected: current, desired: value, ordering: .acquiringAndReleasing)
        if exchanged { return }
        current = original
    }
}
