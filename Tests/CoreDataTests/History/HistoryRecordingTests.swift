import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Persistent history as saves record it: Apple's tables and rows, read back with raw SQL.
@Suite struct HistoryRecordingTests {
    private func trackingStack() throws -> TestStack {
        try TestStack(model: HistoryTestModel.make(), options: HistoryTestModel.tracking)
    }

    @Test func theKeyMakesApplesTablesIndexesAndPrimaryKeyRows() throws {
        let stack = try trackingStack()
        func columns(_ table: String) throws -> [String] {
            try stack.rows("SELECT name || ' ' || type FROM pragma_table_info('\(table)')").map { $0[0] }
        }
        #expect(try columns("ATRANSACTION") == ["Z_PK INTEGER", "Z_ENT INTEGER", "Z_OPT INTEGER", "ZAUTHORTS INTEGER", "ZBUNDLEIDTS INTEGER",
                                                "ZCONTEXTNAMETS INTEGER", "ZPROCESSIDTS INTEGER", "ZTIMESTAMP FLOAT", "ZAUTHOR VARCHAR",
                                                "ZBUNDLEID VARCHAR", "ZCONTEXTNAME VARCHAR", "ZPROCESSID VARCHAR", "ZQUERYGEN BLOB"])
        // Note keeps two attributes in its tombstone: two ZTOMBSTONE columns.
        #expect(try columns("ACHANGE") == ["Z_PK INTEGER", "Z_ENT INTEGER", "Z_OPT INTEGER", "ZCHANGETYPE INTEGER", "ZENTITY INTEGER",
                                           "ZENTITYPK INTEGER", "ZTRANSACTIONID INTEGER", "ZCOLUMNS BLOB", "ZTOMBSTONE0 BLOB", "ZTOMBSTONE1 BLOB"])
        #expect(try columns("ATRANSACTIONSTRING") == ["Z_PK INTEGER", "Z_ENT INTEGER", "Z_OPT INTEGER", "ZNAME VARCHAR"])
        #expect(try stack.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT")
                == [["16001", "CHANGE", "0", "0"], ["16002", "TRANSACTION", "0", "0"], ["16003", "TRANSACTIONSTRING", "0", "0"]])
        let indexes = Set(try stack.rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE 'A%'").map { $0[0] })
        #expect(indexes.isSuperset(of: ["ACHANGE_ZTRANSACTIONID_INDEX", "ATRANSACTION_ZAUTHORTS_INDEX", "Z_TRANSACTION_TransactionTimestampIndex",
                                        "Z_TRANSACTIONSTRING_UNIQUE_NAME"]))
        // The history entities are not the model's: the store's version hashes name only its entities.
        let hashes = stack.coordinator.persistentStores[0].metadata[NSStoreModelVersionHashesKey] as? [String: Any]
        #expect(Set(hashes?.keys.map { $0 } ?? []) == ["Folder", "Note"])
    }

    @Test func eachSaveRecordsOneTransactionWithItsAuthorContextNameAndChanges() throws {
        let stack = try trackingStack()
        stack.context.transactionAuthor = "importer"
        stack.context.name = "background"
        let folder = stack.insert("Folder", ["name": "Inbox"])
        let note = stack.insert("Note", ["title": "Hello", "folder": folder])
        try stack.context.save()
        stack.context.transactionAuthor = "editor"
        note.setValue("Hi", forKey: "title")
        try stack.context.save()
        stack.context.delete(note)
        try stack.context.save()

        let strings = "(SELECT ZNAME FROM ATRANSACTIONSTRING s WHERE s.Z_PK = t.%@)"
        let names = ["ZAUTHORTS", "ZCONTEXTNAMETS", "ZBUNDLEIDTS", "ZPROCESSIDTS"].map { String(format: strings, $0) }.joined(separator: ", ")
        let transactions = try stack.rows("SELECT t.Z_PK, t.Z_ENT, \(names), t.ZAUTHOR, t.ZCONTEXTNAME, t.ZBUNDLEID, t.ZPROCESSID FROM ATRANSACTION t ORDER BY t.Z_PK")
        let process = ProcessInfo.processInfo.processName
        let bundle = Bundle.main.bundleIdentifier ?? process
        #expect(transactions == [
            ["1", "16002", "importer", "background", bundle, process, "NULL", "NULL", "NULL", "NULL"],
            ["2", "16002", "editor", "background", bundle, process, "NULL", "NULL", "NULL", "NULL"],
            ["3", "16002", "editor", "background", bundle, process, "NULL", "NULL", "NULL", "NULL"],
        ])
        // Strings are kept once each.
        #expect(try stack.rows("SELECT count(*), count(DISTINCT ZNAME) FROM ATRANSACTIONSTRING")[0][0] == (bundle == process ? "4" : "5"))
        let timestamp = Double(try stack.rows("SELECT ZTIMESTAMP FROM ATRANSACTION WHERE Z_PK = 3")[0][0])!
        #expect(abs(timestamp - Date().timeIntervalSinceReferenceDate) < 60)

        let folderEnt = try stack.rows("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Folder'")[0][0]
        let noteEnt = try stack.rows("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Note'")[0][0]
        let changes = try stack.rows("SELECT Z_PK, Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, hex(ZCOLUMNS), ZTOMBSTONE1 FROM ACHANGE ORDER BY Z_PK")
        #expect(changes == [
            ["1", "16001", "0", folderEnt, "1", "1", "", "NULL"],
            ["2", "16001", "0", noteEnt, "1", "1", "", "NULL"],
            // Note's bits: folder (the to-one), then body, created, title (attributes by name).
            ["3", "16001", "1", noteEnt, "1", "2", "10", "NULL"],
            // The folder lost its note: an update of its to-many `notes` (Folder's bits: name, notes).
            ["4", "16001", "1", folderEnt, "1", "3", "40", "NULL"],
            ["5", "16001", "2", noteEnt, "1", "3", "", "Hi"],
        ])
        #expect(try stack.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT IN (16001, 16002) ORDER BY Z_ENT") == [["5"], ["3"]])
    }

    @Test func aDeletionKeepsThePreservedAttributesInItsTombstone() throws {
        let stack = try trackingStack()
        let created = Date(timeIntervalSinceReferenceDate: 1_000)
        let note = stack.insert("Note", ["title": "Gone", "body": "not kept", "created": created])
        try stack.context.save()
        stack.context.delete(note)
        try stack.context.save()
        // Columns by attribute name: created, title; stored as their own columns store them.
        #expect(try stack.rows("SELECT ZTOMBSTONE0, ZTOMBSTONE1 FROM ACHANGE WHERE ZCHANGETYPE = 2") == [["1000.0", "Gone"]])
    }

    @Test func withoutTheKeyNothingIsRecordedAndNoTableIsMade() throws {
        let stack = try TestStack(model: HistoryTestModel.make())
        stack.insert("Note", ["title": "x"])
        try stack.context.save()
        #expect(try stack.rows("SELECT name FROM sqlite_master WHERE name LIKE 'A%'").isEmpty)
        #expect(try stack.rows("SELECT count(*) FROM Z_PRIMARYKEY WHERE Z_ENT > 16000") == [["0"]])
    }

    @Test func turningTheKeyOnLaterMakesTheTablesAtTheNextOpen() throws {
        let folder = try TemporaryFolder()
        do {
            let plain = try TestStack(model: HistoryTestModel.make(), directory: folder.url)
            plain.insert("Note", ["title": "before"])
            try plain.context.save()
        }
        let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url, options: HistoryTestModel.tracking)
        stack.insert("Note", ["title": "after"])
        try stack.context.save()
        #expect(try stack.rows("SELECT ZCHANGETYPE, ZENTITYPK FROM ACHANGE") == [["0", "2"]])
    }

    @Test func aDictionaryOfOptionsTurnsTheKeyOnAndFalseTurnsItOff() throws {
        #expect(SQLiteHistory.isRequested(by: [NSPersistentHistoryTrackingKey: ["NSPersistentHistoryTrackingEntitiesToExclude": ["Folder"]]]))
        #expect(SQLiteHistory.isRequested(by: [NSPersistentHistoryTrackingKey: true]))
        #expect(!SQLiteHistory.isRequested(by: [NSPersistentHistoryTrackingKey: false as NSNumber]))
        #expect(!SQLiteHistory.isRequested(by: nil))
    }

    @Test func aFailedSaveRecordsNoHistory() throws {
        let stack = try trackingStack()
        let note = stack.insert("Note", ["title": "a"])
        try stack.context.save()
        // Another coordinator changes the row: this context's update conflicts, nothing is written.
        let other = try TestStack(model: stack.model, directory: stack.directory, options: HistoryTestModel.tracking)
        try other.fetch("Note")[0].setValue("b", forKey: "title")
        try other.context.save()
        note.setValue("c", forKey: "title")
        #expect(throws: NSError.self) { try stack.context.save() }
        #expect(try stack.rows("SELECT count(*) FROM ATRANSACTION") == [["2"]])
        #expect(try stack.rows("SELECT count(*) FROM ACHANGE") == [["2"]])
    }
}

/// Persistent history across a lightweight migration.
@Suite struct HistoryMigrationTests {
    @Test func aLightweightMigrationKeepsTheHistoryEntitiesPrimaryKeyRows() throws {
        let folder = try TemporaryFolder()
        do {
            let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url, options: HistoryTestModel.tracking)
            stack.insert("Note", ["title": "before"])
            try stack.context.save()
        }
        let url = folder.url.appendingPathComponent("Test.sqlite")
        let destination = HistoryTestModel.make()
        destination.entitiesByName["Note"]!.properties.append(attribute("mood", .stringAttributeType))
        try SQLiteLightweightMigration.migrateStore(at: url, from: HistoryTestModel.make(), to: destination)
        #expect(try RawSQLite.query(url.path, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT IN (16001, 16002) ORDER BY Z_ENT")
                == [["16001", "1"], ["16002", "1"]])
        // Saves go on recording after it, from the kept sequences.
        let stack = try TestStack(model: destination, directory: folder.url, options: HistoryTestModel.tracking)
        stack.insert("Note", ["title": "after"])
        try stack.context.save()
        #expect(try stack.rows("SELECT Z_PK FROM ATRANSACTION ORDER BY Z_PK") == [["1"], ["2"]])
    }
}

/// A store that recorded history, opened without `NSPersistentHistoryTrackingKey`.
@Suite struct HistoryKeyTurnedOffTests {
    @Test func aStoreWithHistoryOpensReadOnlyWithoutTheKeyUntilItsHistoryIsPurged() throws {
        let folder = try TemporaryFolder()
        do {
            let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url, options: HistoryTestModel.tracking)
            stack.insert("Note", ["title": "tracked"])
            try stack.context.save()
        }
        do {
            let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url)
            #expect(stack.coordinator.persistentStores[0].isReadOnly)
            #expect(try stack.fetch("Note").count == 1)
            stack.insert("Note", ["title": "lost"])
            let error = #expect(throws: NSError.self) { try stack.context.save() }
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(error?.code == NSPersistentStoreSaveError)
            #expect(error?.localizedDescription.contains("read-only") == true)
        }
        #expect(try RawSQLite.query(folder.url.appendingPathComponent("Test.sqlite").path, "SELECT count(*) FROM ZNOTE") == [["1"]])
        // Purged (with the key), the store opens read-write without it.
        do {
            let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url, options: HistoryTestModel.tracking)
            _ = try stack.context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: Date.distantFuture))
        }
        let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url)
        #expect(!stack.coordinator.persistentStores[0].isReadOnly)
        stack.insert("Note", ["title": "untracked"])
        try stack.context.save()
        #expect(try stack.rows("SELECT count(*) FROM ACHANGE") == [["0"]])
    }

    @Test func aReadOnlyOpenWithTheKeyMakesNoTable() throws {
        let folder = try TemporaryFolder()
        do {
            let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url)
            stack.insert("Note", ["title": "x"])
            try stack.context.save()
        }
        var options = HistoryTestModel.tracking
        options[NSReadOnlyPersistentStoreOption] = true
        let stack = try TestStack(model: HistoryTestModel.make(), directory: folder.url, options: options)
        #expect(try stack.rows("SELECT count(*) FROM sqlite_master WHERE name = 'ATRANSACTION'") == [["0"]])
        #expect(throws: NSError.self) { try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)) }
    }
}

/// A store forced read-only because it was opened without the key after history was recorded:
/// its metadata can't be set (a trap, as Apple raises), and nothing is written.
@Suite struct HistoryReadOnlyMetadataTests {
    @Test func theCheckSeesTheForcedReadOnlyStore() throws {
        let folder = try TemporaryFolder()
        let tracked = try TestStack(model: HistoryTestModel.make(), directory: folder.url, options: HistoryTestModel.tracking)
        tracked.insert("Folder", ["name": "Inbox"])
        try tracked.context.save()
        let plain = try TestStack(model: HistoryTestModel.make(), directory: folder.url)
        #expect(plain.coordinator.persistentStores[0].isReadOnly)
        #expect(!tracked.coordinator.persistentStores[0].isReadOnly)
    }

    @Test func setMetadataOnTheForcedReadOnlyStoreTrapsAndWritesNothing() async throws {
        let folder = try TemporaryFolder()
        do {
            let tracked = try TestStack(model: HistoryTestModel.make(), directory: folder.url, options: HistoryTestModel.tracking)
            tracked.insert("Folder", ["name": "Inbox"])
            try tracked.context.save()
        }
        let path = folder.path
        await #expect(processExitsWith: .failure) { [path = path as String] in
            let plain = try! TestStack(model: HistoryTestModel.make(), directory: URL(fileURLWithPath: path))
            plain.coordinator.setMetadata(["key": "value"], for: plain.coordinator.persistentStores[0])
        }
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: folder.url.appendingPathComponent("Test.sqlite"))
        #expect(metadata["key"] == nil)
        withExtendedLifetime(folder) {}
    }
}
