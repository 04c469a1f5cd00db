import CoreData
import CoreDataExamples
import CoreDataPostgreSQL
import Foundation

/// The `STORE` argument of `coredata inspect` and `coredata migrate`: a SQLite file's path, or a
/// PostgreSQL store's `postgres://` (or `postgresql://`) URL.
enum StoreArgument {
    /// The store's URL: a `postgres://` URL as given (and the PostgreSQL store registered), or a file's.
    static func url(_ store: String) throws -> URL {
        let lowered = store.lowercased()
        guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else { return URL(fileURLWithPath: store) }
        guard let url = URL(string: store) else {
            throw NSError(domain: NSCocoaErrorDomain, code: 134080, userInfo: [NSLocalizedDescriptionKey: "Not a URL: \(StoreInspector.displayName(of: store))"])
        }
        NSPersistentStoreCoordinator.registerPostgreSQLStore()
        return url
    }
}
