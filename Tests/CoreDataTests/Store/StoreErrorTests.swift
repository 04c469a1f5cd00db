import Foundation
import Testing
@testable import CoreData
import TestSupport

@Suite("Store errors: never a crash, never data lost")
struct StoreErrorTests {
    private func add(_ model: NSManagedObjectModel, at url: URL) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
    }

    @Test func fileThatIsNotSQLite() throws {
        let folder = try TemporaryFolder("coredata-errors")
        let url = folder.url.appendingPathComponent("Store.sqlite")
        let text = Data("this is a text file, not a database\n".utf8)
        try text.write(to: url)
        do {
            try add(TestModel.make(), at: url)
            Issue.record("should throw")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == 259)
            #expect(error.localizedDescription.contains("not a SQLite database"))
        }
        #expect(try Data(contentsOf: url) == text, "left untouched")
    }

    @Test func truncatedStore() throws {
        let stack = try TestStack()
        for i in 0..<500 { stack.insert("Car", ["name": "car \(i)", "photo": Data(repeating: UInt8(i % 250), count: 200)]) }
        try stack.context.save()
        try RawSQLite.execute(stack.url.path, "PRAGMA wal_checkpoint(TRUNCATE)")
        let copy = stack.directory.appendingPathComponent("Truncated.sqlite")
        let data = try Data(contentsOf: stack.url)
        try data.prefix(data.count / 3).write(to: copy)
        do {
            try add(stack.model, at: copy)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            _ = context // opening may succeed if the damage is past the schema; reading then fails cleanly
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect([259, NSSQLiteError].contains(error.code))
        }
        #expect(try Data(contentsOf: copy).count == data.count / 3, "left untouched")
    }

    @Test func corruptedHeaderPages() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        try RawSQLite.execute(stack.url.path, "PRAGMA wal_checkpoint(TRUNCATE)")
        let copy = stack.directory.appendingPathComponent("Corrupt.sqlite")
        var data = try Data(contentsOf: stack.url)
        for i in 100..<min(data.count, 4096) { data[i] = 0xA5 }
        try data.write(to: copy)
        #expect(throws: NSError.self) { try add(stack.model, at: copy) }
        #expect(try Data(contentsOf: copy) == data)
    }

    @Test func storeWrittenWithADifferentModel() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "precious"])
        try stack.context.save()
        let changed = TestModel.make()
        let extra = NSAttributeDescription()
        extra.name = "color"
        extra.attributeType = .stringAttributeType
        changed.entitiesByName["Car"]!.properties += [extra]
        do {
            try add(changed, at: stack.url)
            Issue.record("should throw")
        } catch let error as NSError {
            #expect(error.code == NSPersistentStoreIncompatibleVersionHashError)
            #expect(error.localizedDescription.contains("Car (changed)"))
            #expect(!error.localizedDescription.contains("Person"))
        }
        #expect(try stack.reopen().fetch("Car").first?.value(forKey: "name") as? String == "precious")
    }

    @Test func sqliteFileThatIsNotACoreDataStore() throws {
        let folder = try TemporaryFolder("coredata-errors")
        let url = folder.url.appendingPathComponent("Other.sqlite")
        try RawSQLite.execute(url.path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'keep me')")
        #expect(throws: NSError.self) { try add(TestModel.make(), at: url) }
        #expect(try RawSQLite.query(url.path, "SELECT body FROM notes").first?[0] == "keep me")
    }

    @Test func unsupportedStoreType() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(ofType: NSBinaryStoreType, configurationName: nil, at: URL(fileURLWithPath: "/tmp/x"), options: nil)
        }
    }

    /// A small save binds every key; a larger one appends rows without `Z_PK`
    /// (`SQLiteStore.appendingMinimum`): a failure rolls either back.
    @Test(arguments: [3, SQLiteStore.appendingMinimum + 1])
    func saveIsAllOrNothing(count: Int) throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "existing"])
        try stack.context.save()
        // A uniqueness-style failure inside the transaction: make the table refuse a row.
        try stack.refuseCars(named: "bad")
        let other = try stack.reopen()
        let name = { (i: Int) in i == count - 1 ? "bad" : "good \(i)" }
        let cars = (1...count).map { other.insert("Car", ["name": name($0)]) }
        #expect(throws: NSError.self) { try other.context.save() }
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME FROM ZCAR").map { $0[0]! } == ["existing"])
        #expect(try RawSQLite.query(stack.url.path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car'").first?[0] == "1")
        #expect(cars[0].objectID.isTemporaryID)
        // The next save takes the keys from where the file was, in insertion order.
        cars[count - 2].setValue("fine", forKey: "name")
        try other.context.save()
        let expected = [["1", "existing"]] + (1...count).map { ["\($0 + 1)", $0 == count - 1 ? "fine" : name($0)] }
        #expect(try RawSQLite.query(stack.url.path, "SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK").map { [$0[0]!, $0[1]!] } == expected)
        #expect(try RawSQLite.query(stack.url.path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car'").first?[0] == "\(count + 1)")
    }

    @Test func metadataDestroyAndReplace() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let copy = stack.directory.appendingPathComponent("Copy.sqlite")
        try stack.coordinator.replacePersistentStore(at: copy, withPersistentStoreFrom: stack.url, type: .sqlite)
        let other = NSPersistentStoreCoordinator(managedObjectModel: stack.model)
        try other.addPersistentStore(type: .sqlite, at: copy)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = other
        #expect(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).count == 1)
        try other.destroyPersistentStore(at: copy, type: .sqlite)
        #expect(!FileManager.default.fileExists(atPath: copy.path))
        #expect(other.persistentStores.isEmpty)
        #expect(throws: NSError.self) { try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: copy) }
    }
}
