import ArgumentParser
import CoreData
import CoreDataExamples
import Foundation

/// `coredata inspect STORE [--model PATH.xcdatamodeld]`: a store's metadata, entities and row
/// counts, and with `--model`, which version of the model wrote it. `STORE` is a SQLite file or
/// a PostgreSQL store's `postgres://user[:password]@host[:port]/database` URL.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a Core Data store's metadata, entities and row counts (a SQLite file or a postgres:// URL).",
        discussion: "With --model, also say which version of the model wrote the store, or that none did and which entities differ."
    )

    @Argument(help: "The store file (.sqlite), or a PostgreSQL store's postgres:// URL.") var store: String
    @Option(help: "A model (.xcdatamodeld, or one .xcdatamodel): say which of its versions wrote the store.") var model: String?

    func run() throws {
        do {
            let inspector = StoreInspector(url: try StoreArgument.url(store))
            print(try inspector.report())
            if let model {
                print("")
                print(try inspector.versionReport(model: URL(fileURLWithPath: model)))
            }
        } catch let error as NSError {
            throw CommandFailure("Can't inspect \(StoreInspector.displayName(of: store)): \(error.localizedDescription) (\(error.domain) \(error.code))")
        }
    }
}
