import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A store whose history Apple's framework (or another tool) wrote: the three tables made with
/// raw SQL as Apple's stores have them, an upgraded store's column order (the string columns
/// added last), `Z_OPT` NULL, strings interned.
@Suite struct HistoryAppleLayoutTests {
    /// A store with one folder and one note (`Z_PK` 1 each) and Apple-written history: the
    /// insert of both (transaction 1, authored "NSCloudKitMirroringDelegate.import"), then the
    /// deletion of note 2 whose tombstone kept its title (transaction 2, an old VARCHAR author).
    private func appleStore(in folder: TemporaryFolder) throws -> URL {
        let url = folder.url.appendingPathComponent("Test.sqlite")
        do {
            let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url)
            let inbox = stack.insert("Folder", ["name": "Inbox"])
            stack.insert("Note", ["title": "Kept", "folder": inbox])
            try stack.context.save()
        }
        let note = try RawSQLite.query(url.path, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Note'")[0][0]!
        let folderEnt = try RawSQLite.query(url.path, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Folder'")[0][0]!
        try RawSQLite.execute(url.path, """
            CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB, ZTOMBSTONE0 BLOB, ZTOMBSTONE1 BLOB );
            CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER );
            CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
            CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID);
            CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC);
            INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (16001, 'CHANGE', 0, 3), (16002, 'TRANSACTION', 0, 2), (16003, 'TRANSACTIONSTRING', 0, 3);
            INSERT INTO ATRANSACTIONSTRING VALUES (1, 16003, NULL, 'NSCloudKitMirroringDelegate.import'), (2, 16003, NULL, 'com.example.notes'), (3, 16003, NULL, 'notesd');
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZTIMESTAMP, ZAUTHORTS, ZBUNDLEIDTS, ZPROCESSIDTS) VALUES (1, 16002, NULL, 700000000.5, 1, 2, 3);
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZTIMESTAMP, ZAUTHOR, ZBUNDLEIDTS, ZPROCESSIDTS, ZCONTEXTNAME) VALUES (2, 16002, NULL, 700000100.0, 'legacy author', 2, 3, 'main');
            INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID) VALUES (1, 16001, NULL, 0, \(folderEnt), 1, 1), (2, 16001, NULL, 0, \(note), 1, 1);
            INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZTOMBSTONE0, ZTOMBSTONE1) VALUES (3, 16001, NULL, 2, \(note), 2, 2, 699999999.0, 'Gone');
            """)
        return url
    }

    @Test func itOpensWithoutTheKeyAndItsEntitiesReadAsBefore() throws {
        let folder = try TemporaryFolder()
        _ = try appleStore(in: folder)
        let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url)
        #expect(try stack.fetch("Note").map { $0.value(forKey: "title") as? String } == ["Kept"])
        #expect(try stack.context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Folder")) == 1)
        // Z_ENT 16001… are not other entities of the model's tables: fetches need no Z_ENT condition.
        let store = try #require(stack.coordinator.persistentStores.first as? SQLiteStore)
        #expect(store.entityCondition(FetchPlan(entity: stack.model.entitiesByName["Note"]!)) == nil)
    }

    @Test func itsHistoryReadsThroughTheAPIAndNewSavesContinueIt() throws {
        let folder = try TemporaryFolder()
        _ = try appleStore(in: folder)
        let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url, options: HistoryTestModel.tracking)
        let result = try #require(try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)) as? NSPersistentHistoryResult)
        let transactions = try #require(result.result as? [NSPersistentHistoryTransaction])
        #expect(transactions.map(\.transactionNumber) == [1, 2])
        #expect(transactions.map(\.author) == ["NSCloudKitMirroringDelegate.import", "legacy author"])
        #expect(transactions.map(\.bundleID) == ["com.example.notes", "com.example.notes"])
        #expect(transactions.map(\.processID) == ["notesd", "notesd"])
        #expect(transactions.map(\.contextName) == [nil, "main"])
        #expect(transactions[0].timestamp == Date(timeIntervalSinceReferenceDate: 700000000.5))
        let note = try stack.fetch("Note")[0]
        #expect(transactions[0].changes?.map(\.changedObjectID).contains(note.objectID) == true)
        let deletion = try #require(transactions[1].changes?.first)
        #expect(deletion.changeType == .delete)
        #expect(deletion.tombstone?["title"] as? String == "Gone")
        #expect(deletion.tombstone?["created"] as? Date == Date(timeIntervalSinceReferenceDate: 699999999))

        // A new save goes on from Apple's Z_MAX, reusing Apple's interned strings.
        stack.context.transactionAuthor = "NSCloudKitMirroringDelegate.import"
        note.setValue("Edited", forKey: "title")
        try stack.context.save()
        let later = try #require(try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: transactions[1].token)) as? NSPersistentHistoryResult)
        let added = try #require(later.result as? [NSPersistentHistoryTransaction])
        #expect(added.map(\.transactionNumber) == [3])
        #expect(added[0].changes?.map(\.changeID) == [4])
        #expect(added[0].changes?.first?.updatedProperties?.map(\.name) == ["title"])
        #expect(try stack.rows("SELECT ZAUTHORTS FROM ATRANSACTION WHERE Z_PK = 3") == [["1"]])
    }
}
