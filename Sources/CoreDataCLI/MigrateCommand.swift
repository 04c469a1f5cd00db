import ArgumentParser
import CoreDataExamples
import Foundation

/// `coredata migrate STORE --model PATH.xcdatamodeld [--mapping DIR] [--to VERSION] [--dry-run]`:
/// migrates a store to a version of its model (through a mapping model, or lightweight migration),
/// or with `--dry-run` prints what it would do. `STORE` is a SQLite file or a PostgreSQL store's
/// `postgres://` URL (a mapping model's migration into a new schema, or lightweight migration in
/// place, each in one transaction).
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a Core Data store (a SQLite file or a postgres:// URL) to another version of its model.",
        discussion: "Finds the version of the model that wrote the store and the mapping to the target version (the current one unless --to names another): a mapping model (.xcmappingmodel) for the two versions in --mapping's folder (none there is an error), or without --mapping one beside the model, or else the inferred one. Prints it, then migrates the store, with a progress bar on standard error when it is a terminal: through the mapping model into a new file whose contents then replace the store's in one transaction, or in place in one transaction (a PostgreSQL store: into a new schema, or in place as transactional DDL). A mapping model whose entity migration policies are classes of an app can't run here: they are not in this program. --dry-run prints the plan and changes nothing."
    )

    @Argument(help: "The store file (.sqlite), or a PostgreSQL store's postgres:// URL.") var store: String
    @Option(help: "The versioned model (.xcdatamodeld).") var model: String
    @Option(name: .customLong("to"), help: "The version to migrate to (default: the model's current version).") var version: String?
    @Option(help: "A folder of mapping models (.xcmappingmodel); one for the two versions must be there.") var mapping: String?
    @Flag(help: "Print the mapping and change nothing.") var dryRun = false

    func run() throws {
        do {
            let tool = StoreMigrationTool(store: try StoreArgument.url(store), model: URL(fileURLWithPath: model), to: version,
                                          mappingFolder: mapping.map { URL(fileURLWithPath: $0, isDirectory: true) })
            print(try tool.plan())
            guard !dryRun else { return }
            print(try Self.migrate(tool))
        } catch let error as NSError {
            // The reasons underneath (a failed save's validation errors, the inference's entity and property).
            var reasons = [error.localizedDescription]
            var next = error.userInfo[NSUnderlyingErrorKey] as? NSError
            while let underlying = next, reasons.count < 4 {
                reasons.append(underlying.localizedDescription)
                next = underlying.userInfo[NSUnderlyingErrorKey] as? NSError
            }
            throw CommandFailure("Can't migrate \(StoreInspector.displayName(of: store)): \(reasons.joined(separator: ": ")) (\(error.domain) \(error.code))")
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
