import ArgumentParser

extension StepBench {
    /// `stepbench show`: what is in results files, one subcommand per way of showing it (the
    /// document every script reads, the ranking, an export, the machine kind).
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Show what results files hold: the document scripts read (default), the ranking, an export, the machine kind, what the report draws.",
            subcommands: [Read.self, Rank.self, Export.self, Machine.self, ReportData.self],
            defaultSubcommand: Read.self)
    }

    /// `stepbench history`: a results folder over its commits, and the change-point search.
    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A results folder over its commits: every series and its change points (default), or the search alone on given series.",
            subcommands: [Series.self, Detect.self],
            defaultSubcommand: Series.self)
    }
}
