import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// Destroying a PostgreSQL store, migrating one into a database that holds a store, and what
/// messages and sessions show of the URL.
@Suite("PostgreSQL store: destroy, migrate into, URL", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLDestroyTests {
    private func tables(_ database: TemporaryDatabase) throws -> [String] {
        try database.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1").map { $0[0] ?? "" }
    }

    /// `destroyPersistentStore` did nothing for a PostgreSQL store: it stayed added and every
    /// table and row stayed, so "destroy and load again" after a 134100 looped.
    @Test func destroyDropsTheStoresTablesAndRemovesIt() throws {
        let database = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let coordinator = try database.coordinator(model, options: [NSPersistentHistoryTrackingKey: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.insert("Person", ["name": "Ada"])
        try context.save()
        try database.run("CREATE TABLE \"ZAPPLOG\" (line text); CREATE TABLE \"Z_2024_SALES\" (total int)") // the app's own tables
        #expect(try tables(database).contains("ATRANSACTION"))

        try coordinator.destroyPersistentStore(at: database.url, ofType: NSPostgreSQLStoreType)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(Set(try tables(database)) == ["Z_2024_SALES", "ZAPPLOG"])
        #expect(try !PostgreSQLStore.holdsStore(at: database.url, options: nil))
        // Again, with no store there: nothing to do.
        try coordinator.destroyPersistentStore(at: database.url, ofType: NSPostgreSQLStoreType)

        // Loading again makes a new, empty store.
        let again = try database.coordinator(model)
        let fresh = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        fresh.persistentStoreCoordinator = again
        #expect(try fresh.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 0)
    }

    /// Another coordinator's store (another server's) sees errors after the destroy, never a save
    /// that seems to succeed.
    @Test func anotherCoordinatorsSaveAfterADestroyThrows() throws {
        let database = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let (first, second) = try database.contextsOfTwoCoordinators(model)
        try first.persistentStoreCoordinator!.destroyPersistentStore(at: database.url, ofType: NSPostgreSQLStoreType)
        let error = second.performAndWait { () -> Error? in
            second.insert("Person", ["name": "Lost"])
            do { try second.save(); return nil } catch { return error }
        }
        #expect(error != nil)
    }

    /// `migratePersistentStore` into a database that held a store copied the rows into it (or
    /// failed with a uniqueness error after using up its keys).
    @Test func migratingIntoADatabaseThatHoldsAStoreIsRefused() throws {
        let database = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let target = try database.coordinator(model)
        let targetContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        targetContext.persistentStoreCoordinator = target
        targetContext.insert("Person", ["name": "Already here"])
        try targetContext.save()

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let source = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.insert("Person", ["name": "Moved"])
        try context.save()
        #expect {
            try coordinator.migratePersistentStore(source, to: database.url, options: nil, withType: NSPostgreSQLStoreType)
        } throws: { ($0 as NSError).code == NSFileWriteFileExistsError }
        #expect(coordinator.persistentStores.count == 1 && coordinator.persistentStores[0] === source)
        #expect(try database.query("SELECT \"ZNAME\" FROM \"ZPERSON\"") == [["Already here"]])
    }

    /// The message of "the same store twice" showed the URL with its password; a password given as
    /// libpq's `password` parameter showed in every message.
    @Test func messagesNeverShowAPassword() throws {
        let database = try TemporaryDatabase()
        var components = URLComponents(url: database.url, resolvingAgainstBaseURL: false)!
        components.user = components.user ?? "postgres"
        components.password = "s3cret"
        let url = components.url!
        #expect(!PostgreSQLURL.masked(url).contains("s3cret"))
        components.password = nil
        components.queryItems = [URLQueryItem(name: "password", value: "s3cret"), URLQueryItem(name: "sslpassword", value: "k3y"),
                                 URLQueryItem(name: "sslmode", value: "disable")]
        let masked = PostgreSQLURL.masked(components.url!)
        #expect(!masked.contains("s3cret") && !masked.contains("k3y") && masked.contains("sslmode=disable"), "\(masked)")
        // Foundation reads `app:2024#Secret@db…` as host `app`, port 2024 and no password; libpq
        // as user `app`, password `2024#Secret`: the text between `://` and the last `@` is masked.
        for (given, shown) in [("postgres://app:2024#Secret@db.example.com/cars", "postgres://app:***@db.example.com/cars"),
                               ("postgres://app:a b@db.example.com/cars?password=se#cret&sslmode=require", "postgres://app:***@db.example.com/cars?password=***&sslmode=require"),
                               ("postgres://app@[::1]:5432/cars", "postgres://app@[::1]:5432/cars")] {
            #expect(PostgreSQLURL.masked(given) == shown)
        }

        let coordinator = try database.coordinator(PostgreSQLTestModel.make())
        let twice = URL(string: database.url.absoluteString + "?password=s3cret")!
        #expect {
            try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: twice, options: nil)
        } throws: { error in
            let error = error as NSError
            return error.code == 134081 && !error.localizedDescription.contains("s3cret")
        }
    }

    /// The URL's `application_name` was overridden with the store's own.
    @Test func theURLsApplicationNameIsKept() throws {
        let database = try TemporaryDatabase()
        let named = try LibPQConnection(url: URL(string: database.url.absoluteString + "?application_name=inventory")!, password: nil)
        #expect(try named.execute("SELECT current_setting('application_name')", []).text(0, 0) == "inventory")
        let plain = try LibPQConnection(url: database.url, password: nil)
        #expect(try plain.execute("SELECT current_setting('application_name')", []).text(0, 0) == "swift-coredata")
    }
}
