import StepBenchScenarios

/// The tests name a row's subject as results files write it ("atomic", "floor"); a name that is
/// no subject stops the test at once.
extension Subject: ExpressibleByStringLiteral {
    public init(stringLiteral name: String) {
        guard let subject = Subject(name: name) else { preconditionFailure("'\(name)' is no subject") }
        self = subject
    }
}
