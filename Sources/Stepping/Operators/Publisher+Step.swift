@preconcurrency import OpenCombine

extension Publisher {
    /// Subscribes with a stepping function: `stepper` is called with each input and a promise,
    /// and the next input is not requested until the promise is fulfilled with `.more`.
    ///
    /// - Parameters:
    ///   - design: how the subscriber synchronises; every design obeys the same rules
    ///     (CONFORMANCE.md) but `seed`, which keeps the original's flaws.
    ///   - stepper: called with each input (one at a time, in order) and once with the
    ///     completion; on whatever thread upstream or the promise's caller is on.
    /// - Returns: cancels upstream when cancelled or deinitialised.
    @inlinable
    public func step(
        design: SteppingDesign = .default,
        with stepper: @escaping @Sendable (StepEvent<Output, Failure>) -> Void
    ) -> AnyCancellable {
        design.step(self, with: stepper)
    }
}
