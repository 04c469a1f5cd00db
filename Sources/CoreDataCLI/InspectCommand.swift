import ArgumentParser
import CoreDataExamples
import Foundation

/// `coredata inspect STORE`: a store's metadata, entities and row counts.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a Core Data SQLite store's metadata, entities and row counts."
    )

    @Argument(help: "The store file (.sqlite).") var store: String

    func run() throws {
        do {
            print(try StoreInspector(url: URL(fileURLWithPath: store)).report())
        } catch let error as NSError {
            throw CommandFailure("Can't inspect \(store): \(error.localizedDescription) (\(error.domain) \(error.code))")
        }
    }
}
