import CoreData
import Foundation

extension NSPersistentStoreCoordinator {
    /// Makes stores of type ``NSPostgreSQLStoreType`` (`"PostgreSQL"`) available to every
    /// coordinator, and to `NSPersistentContainer` through its store descriptions, as
    /// `registerStoreClass(_:forStoreType:)` does for a store class. Call it once, before adding
    /// the first PostgreSQL store; calling it again does nothing more.
    ///
    /// The store's URL names the database: `postgres://user:password@host:port/database`, with
    /// libpq's parameters in its query (`?sslmode=require`, `?connect_timeout=5`). The password
    /// may instead be given in the options, under ``NSPostgreSQLPasswordOption``, which wins
    /// over one in the URL.
    ///
    /// ```swift
    /// import CoreData
    /// import CoreDataPostgreSQL
    ///
    /// NSPersistentStoreCoordinator.registerPostgreSQLStore()
    /// try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil,
    ///     at: URL(string: "postgres://app@db.example.com:5432/cars?sslmode=require")!,
    ///     options: [NSPostgreSQLPasswordOption: password])
    /// ```
    public class func registerPostgreSQLStore() {
        PostgreSQLStoreRegistry.register { url, password throws(PostgreSQLError) in
            try LibPQConnection(url: url, password: password)
        }
    }
}
