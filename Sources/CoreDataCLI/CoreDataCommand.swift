import ArgumentParser

/// `coredata`: the demo, store inspection and benchmarks of swift-coredata.
@main
struct CoreDataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coredata",
        abstract: "Core Data for Linux: a demo, a store inspector and benchmarks.",
        subcommands: [DemoCommand.self, InspectCommand.self, MigrateCommand.self, BenchCommand.self]
    )
}

/// A failure reported as `Error: <message>` with exit status 1 (no usage text).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
