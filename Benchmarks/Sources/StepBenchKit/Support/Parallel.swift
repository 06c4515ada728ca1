import Dispatch
import Foundation
@_spi(Measurement) import Stepping
@_spi(StepBench) import SteppingConformance
import Synchronization

/// `body` applied to every element, at most `width` at a time (worker threads take the next
/// element as they finish one), the results in the elements' order. Every element is tried; the
/// first error in element order is thrown once all have finished. For child processes that each
/// use one core (callgrind runs one thread at a time), so `width` = the machine's cores.
func parallelMap<Element, Output>(
    _ elements: [Element], width: Int = ProcessInfo.processInfo.activeProcessorCount,
    _ body: (Element) throws -> Output
) throws -> [Output] {
    let slots = UnsafeMutableBufferPointer<Result<Output, any Error>?>.allocate(capacity: elements.count)
    slots.initialize(repeating: nil)
    defer {
        _ = slots.deinitialize()
        slots.deallocate()
    }
    let next = Atomic<Int>(0)
    withoutActuallyEscaping(body) { body in
        // Unchecked: each slot is written by the one worker that took its index and read after
        // every worker returned (concurrentPerform returns after all its iterations); `body`
        // must be safe to call from several threads (the caller's promise).
        let shared = Unchecked((elements, slots, body))
        DispatchQueue.concurrentPerform(iterations: max(1, min(width, elements.count))) { _ in
            let (elements, slots, body) = shared.value
            while true {
                let i = next.add(1, ordering: .relaxed).oldValue
                guard i < elements.count else { return }
                slots[i] = Result { try body(elements[i]) }
            }
        }
    }
    return try slots.map { try $0!.get() }
}
