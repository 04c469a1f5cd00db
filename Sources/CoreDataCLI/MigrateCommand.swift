import ArgumentParser
import CoreDataExamples
import Foundation

/// `coredata migrate STORE --model PATH.xcdatamodeld [--to VERSION] [--dry-run]`: migrates a store in
/// place to a version of its model (lightweight migration), or with `--dry-run` prints what it would do.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a Core Data SQLite store to another version of its model.",
        discussion: "Finds the version of the model that wrote the store, infers the mapping to the target version (the current one unless --to names another), prints it, and migrates the store in place in one transaction, with a progress bar on standard error when it is a terminal. --dry-run prints the plan and changes nothing."
    )

    @Argument(help: "The store file (.sqlite).") var store: String
    @Option(help: "The versioned model (.xcdatamodeld).") var model: String
    @Option(name: .customLong("to"), help: "The version to migrate to (default: the model's current version).") var version: String?
    @Flag(help: "Print the inferred mapping and change nothing.") var dryRun = false

    func run() throws {
        let tool = StoreMigrationTool(store: URL(fileURLWithPath: store), model: URL(fileURLWithPath: model), to: version)
        do {
            print(try tool.plan())
            guard !dryRun else { return }
            print(try Self.migrate(tool))
        } catch let error as NSError {
            throw CommandFailure("Can't migrate \(store): \(error.localizedDescription) (\(error.domain) \(error.code))")
        }
    }

    /// Migrates with a progress bar on standard error, redrawn in place, when it is a terminal;
    /// a plain line otherwise.
    static func migrate(_ tool: StoreMigrationTool) throws -> String {
        let standardError = FileHandle.standardError
        guard isatty(standardError.fileDescriptor) != 0 else {
            standardError.write(Data("Migrating…\n".utf8))
            return try tool.migrate()
        }
        defer { standardError.write(Data("\n".utf8)) }
        return try tool.migrate { fraction in
            standardError.write(Data("\rMigrating \(StoreMigrationTool.progressBar(fraction))".utf8))
        }
    }
}
