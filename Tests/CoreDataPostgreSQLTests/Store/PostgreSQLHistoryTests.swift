import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// Persistent history on the PostgreSQL store: the SQLite store's tables in PostgreSQL types,
/// written by each save, read and purged through `NSPersistentHistoryChangeRequest`.
@Suite("PostgreSQL persistent history", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLHistoryTests {
    static var tracking: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true as NSNumber] }

    /// A private-queue context on a new coordinator of `database`'s store.
    static func context(_ database: TemporaryDatabase, options: [AnyHashable: Any]? = tracking,
                        model: NSManagedObjectModel = PostgreSQLTestModel.make()) throws -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(model, options: options)
        return context
    }

    static func transactions(_ request: NSPersistentHistoryChangeRequest, in context: NSManagedObjectContext) throws -> [NSPersistentHistoryTransaction] {
        try context.performAndWait {
            try #require((try context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        }
    }

    /// Three saves: insert a person and a car (author "importer"), rename the person, delete the car.
    private func threeSaves(_ context: NSManagedObjectContext) throws -> (person: NSManagedObjectID, car: NSManagedObjectID) {
        try context.performAndWait {
            context.name = "editor context"
            context.transactionAuthor = "importer"
            let person = context.insert("Person", ["name": "Ann", "age": 40])
            let car = context.insert("Car", ["name": "Beetle", "owner": person])
            try context.save()
            context.transactionAuthor = nil
            person.setValue("Anna", forKey: "name")
            person.setValue(41, forKey: "age")
            try context.save()
            context.delete(car)
            try context.save()
            return (person.objectID, car.objectID)
        }
    }

    @Test func theHistoryTablesAreSQLitesInPostgreSQLTypes() throws {
        let database = try TemporaryDatabase()
        let context = try Self.context(database)
        #expect(try database.query("""
            SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'ACHANGE' ORDER BY ordinal_position
            """) == [["Z_PK", "bigint"], ["Z_ENT", "integer"], ["Z_OPT", "integer"], ["ZCHANGETYPE", "integer"], ["ZENTITY", "integer"],
                     ["ZENTITYPK", "bigint"], ["ZTRANSACTIONID", "bigint"], ["ZCOLUMNS", "bytea"]])
        #expect(try database.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'ATRANSACTION' ORDER BY ordinal_position")
            .map { $0[0] ?? "" } == ["Z_PK", "Z_ENT", "Z_OPT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP",
                                     "ZAUTHOR", "ZBUNDLEID", "ZCONTEXTNAME", "ZPROCESSID", "ZQUERYGEN"])
        #expect(try database.query("SELECT \"Z_ENT\", \"Z_NAME\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" > 16000 ORDER BY 1")
            == [["16001", "CHANGE"], ["16002", "TRANSACTION"], ["16003", "TRANSACTIONSTRING"]])
        _ = try threeSaves(context)
        #expect(try database.query("SELECT \"Z_PK\", \"Z_ENT\", \"Z_OPT\" FROM \"ATRANSACTION\" ORDER BY 1")
            == [["1", "16002", nil], ["2", "16002", nil], ["3", "16002", nil]])
        #expect(try database.query("SELECT \"ZCHANGETYPE\", \"ZENTITY\", \"ZTRANSACTIONID\" FROM \"ACHANGE\" ORDER BY \"Z_PK\"")
            == [["0", "3", "1"], ["0", "1", "1"], ["1", "3", "2"], ["1", "3", "3"], ["2", "1", "3"]])
        // A store opened later without the key is read-only (PostgreSQLHistoryKeyTurnedOffTests),
        // and one that never tracked writes no history.
        let plain = try Self.context(database, options: nil)
        plain.performAndWait {
            plain.insert("Person", ["name": "Bob"])
            #expect(throws: NSError.self) { try plain.save() }
        }
        #expect(try database.query("SELECT count(*) FROM \"ATRANSACTION\"") == [["3"]])
        let other = try TemporaryDatabase()
        _ = try Self.context(other, options: nil)
        #expect(try other.query("SELECT to_regclass('\"ATRANSACTION\"') IS NULL") == [["t"]])
    }

    @Test func aFetchReturnsEveryTransactionWithItsChangesAuthorAndContextName() throws {
        let database = try TemporaryDatabase()
        let context = try Self.context(database)
        let (person, car) = try threeSaves(context)
        let all = try Self.transactions(.fetchHistory(after: nil as NSPersistentHistoryToken?), in: context)
        #expect(all.map(\.transactionNumber) == [1, 2, 3])
        #expect(all.map(\.author) == ["importer", nil, nil])
        let storeID = context.persistentStoreCoordinator!.persistentStores[0].identifier
        #expect(all.allSatisfy { $0.contextName == "editor context" && $0.storeID == storeID })
        #expect(all[0].processID == ProcessInfo.processInfo.processName)
        #expect(abs(all[2].timestamp.timeIntervalSinceNow) < 60)
        let first = try #require(all[0].changes)
        #expect(first.map(\.changeType) == [.insert, .insert])
        #expect(first.map(\.changedObjectID) == [person, car])
        #expect(first[0].transaction === all[0])
        let update = try #require(all[1].changes?.first)
        #expect(update.changeType == .update && update.changedObjectID == person)
        #expect(Set(update.updatedProperties?.map(\.name) ?? []) == ["name", "age"])
        // The person lost the car: an update of its `cars`, then the delete.
        #expect(all[2].changes?.map(\.changeType) == [.update, .delete])
        #expect(all[2].changes?.first?.updatedProperties?.map(\.name) == ["cars"])
        #expect(all[2].changes?.last?.changedObjectID == car)
    }

    @Test func aFetchAfterATokenATransactionOrADate() throws {
        let database = try TemporaryDatabase()
        let context = try Self.context(database)
        _ = try threeSaves(context)
        let all = try Self.transactions(.fetchHistory(after: Date.distantPast), in: context)
        #expect(all.count == 3)
        #expect(try Self.transactions(.fetchHistory(after: all[0].token), in: context).map(\.transactionNumber) == [2, 3])
        #expect(try Self.transactions(.fetchHistory(after: all[1]), in: context).map(\.transactionNumber) == [3])
        let current = try #require(context.persistentStoreCoordinator!.currentPersistentHistoryToken(fromStores: nil))
        #expect(current == all[2].token)
        #expect(try Self.transactions(.fetchHistory(after: current), in: context).isEmpty)
        #expect(try Self.transactions(.fetchHistory(after: Date().addingTimeInterval(60)), in: context).isEmpty)
        _ = try database.query("UPDATE \"ATRANSACTION\" SET \"ZTIMESTAMP\" = \"ZTIMESTAMP\" - 3600 WHERE \"Z_PK\" = 1")
        #expect(try Self.transactions(.fetchHistory(after: Date().addingTimeInterval(-1800)), in: context).map(\.transactionNumber) == [2, 3])
        // Another coordinator's save (another server) is the next transaction, after the token.
        let other = try Self.context(database)
        try other.performAndWait {
            other.insert("Person", ["name": "Cy"])
            try other.save()
        }
        let later = try Self.transactions(.fetchHistory(after: current), in: context)
        #expect(later.map(\.transactionNumber) == [4])
        #expect(later.first?.changes?.map(\.changeType) == [.insert])
    }

    @Test func aPurgeBeforeATokenKeepsItsTransactionAndAPurgeThroughItExpiresIt() throws {
        let database = try TemporaryDatabase()
        let context = try Self.context(database)
        _ = try threeSaves(context)
        let all = try Self.transactions(.fetchHistory(after: Date.distantPast), in: context)
        let purge = NSPersistentHistoryChangeRequest.deleteHistory(before: all[1].token)
        purge.resultType = .count
        #expect(try context.performAndWait { try (context.execute(purge) as? NSPersistentHistoryResult)?.result as? Int } == 1)
        #expect(try database.query("SELECT \"Z_PK\" FROM \"ATRANSACTION\" ORDER BY 1") == [["2"], ["3"]])
        #expect(try database.query("SELECT DISTINCT \"ZTRANSACTIONID\" FROM \"ACHANGE\" ORDER BY 1") == [["2"], ["3"]])
        #expect(try Self.transactions(.fetchHistory(after: all[1].token), in: context).map(\.transactionNumber) == [3])
        // Transaction 1 was purged, but nothing after it: its token still reads the whole rest.
        #expect(try Self.transactions(.fetchHistory(after: all[0].token), in: context).map(\.transactionNumber) == [2, 3])
        // Purged past it (transaction 2 gone too): transaction 1's token has expired.
        _ = try context.performAndWait { try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: all[2].token)) }
        let error = #expect(throws: NSError.self) {
            try context.performAndWait { _ = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: all[0].token)) }
        }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == 134301)
        // A purge before a date; then everything.
        _ = try context.performAndWait { try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: Date().addingTimeInterval(60))) }
        #expect(try database.query("SELECT count(*) FROM \"ATRANSACTION\"") == [["0"]])
        #expect(try database.query("SELECT count(*) FROM \"ACHANGE\"") == [["0"]])
    }

    @Test func aDeleteKeepsItsTombstoneAttributes() throws {
        let database = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let kept = ["name", "born", "photo", "balance", "identifier", "score", "active"]
        for name in kept {
            (model.entitiesByName["Person"]!.propertiesByName[name] as! NSAttributeDescription).preservesValueInHistoryOnDeletion = true
        }
        let context = try Self.context(database, model: model)
        let born = Date(timeIntervalSinceReferenceDate: 123_456.789), identifier = UUID()
        let values: [String: Any] = ["name": "Ann ✓", "born": born, "photo": Data([0, 1, 0xff]), "balance": Decimal(string: "12.125")!,
                                     "identifier": identifier, "score": 0.1, "active": true]
        try context.performAndWait {
            let ann = context.insert("Person", values.merging(["age": 3]) { first, _ in first })
            context.insert("Person", ["name": "Bob"])
            try context.save()
            context.delete(ann)
            try context.save()
        }
        #expect(try database.query("SELECT count(*) FROM information_schema.columns WHERE table_name = 'ACHANGE' AND column_name LIKE 'ZTOMBSTONE%'")
            == [["7"]])
        let delete = try #require(try Self.transactions(.fetchHistory(after: Date.distantPast), in: context).last?.changes?.first)
        #expect(delete.changeType == .delete)
        let tombstone = try #require(delete.tombstone)
        #expect(Set(tombstone.keys.compactMap { $0 as? String }) == Set(kept))
        #expect(tombstone["name"] as? String == "Ann ✓")
        #expect(tombstone["born"] as? Date == born)
        #expect(tombstone["photo"] as? Data == Data([0, 1, 0xff]))
        #expect(tombstone["balance"] as? Decimal == Decimal(string: "12.125")!)
        #expect(tombstone["identifier"] as? UUID == identifier)
        #expect(tombstone["score"] as? Double == 0.1)
        #expect(tombstone["active"] as? Bool == true)
    }

    @Test func aStoreWithoutTheKeyRefusesHistoryRequests() throws {
        let database = try TemporaryDatabase()
        let context = try Self.context(database, options: nil)
        let error = #expect(throws: NSError.self) {
            try context.performAndWait { _ = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)) }
        }
        #expect(error?.code == 134091)
        #expect(context.persistentStoreCoordinator!.currentPersistentHistoryToken(fromStores: nil) == nil)
    }
}
