import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// A save across several stores nests them in one order on every server
/// (`NSPersistentStoreCoordinator.saveOrderKey(of:)`), so two servers' saves never wait for
/// each other in a circle.
@Suite("PostgreSQL stores in a save across several stores")
struct PostgreSQLSaveOrderTests {
    /// The stores in the order a save nests them.
    private static func saveOrder(_ coordinator: NSPersistentStoreCoordinator) -> [NSPersistentStore] {
        coordinator.persistentStores.sorted {
            NSPersistentStoreCoordinator.saveOrderKey(of: $0) < NSPersistentStoreCoordinator.saveOrderKey(of: $1)
        }
    }

    /// The same server spelled `127.0.0.1` or `localhost`.
    private static func spelled(_ url: URL, host: String) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.host = host
        return components.url!
    }

    /// Two servers, each with the same two databases under other spellings of their URLs and
    /// added in opposite orders, nest them in the same order: by the stores' UUIDs, which every
    /// server reads from the databases.
    @Test(PostgreSQLTestServer.skipUnlessServer)
    func serversSpellingTheDatabasesDifferentlyNestThemAlike() throws {
        let cars = try TemporaryDatabase(), people = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let first = NSPersistentStoreCoordinator(managedObjectModel: model)
        for url in [Self.spelled(cars.url, host: "127.0.0.1"), Self.spelled(people.url, host: "localhost")] {
            try first.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        }
        let second = NSPersistentStoreCoordinator(managedObjectModel: model)
        for url in [Self.spelled(people.url, host: "127.0.0.1"), Self.spelled(cars.url, host: "localhost")] {
            try second.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: nil)
        }
        let databases = { (stores: [NSPersistentStore]) in stores.map { $0.url!.lastPathComponent } }
        #expect(Set(first.persistentStores.map(\.identifier)) == Set(second.persistentStores.map(\.identifier)), "one UUID per database")
        #expect(databases(Self.saveOrder(first)) == databases(Self.saveOrder(second)))
        for coordinator in [first, second] {
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }
    }

    @Test func fileStoresAreOrderedByTheirPaths() {
        let file = NSPersistentStore(persistentStoreCoordinator: nil, configurationName: nil, at: URL(fileURLWithPath: "/tmp/x/../cars.sqlite"))
        #expect(NSPersistentStoreCoordinator.saveOrderKey(of: file) == "/tmp/cars.sqlite")
    }
}
