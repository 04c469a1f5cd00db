import CSQLite
import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Issue 23: several real processes on one store file. The other processes are exit tests
/// (`#expect(processExitsWith:)`): Swift Testing runs the closure in a child process started
/// from this test binary, so the children need no executable of their own and run the same
/// models; each exits with success only if everything in it worked. One test at a time (at
/// most four children at once): the machine runs the rest of the suite meanwhile.
@Suite(.serialized) struct ManyProcessesTests {
    // MARK: Remote change notifications

    @Test func anotherProcessesSaveIsPostedAndMergedIntoAViewContext() async throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, context) = try RemoteChangeNotificationTests.open(url, options: RemoteChangeNotificationTests.observing)
        let note = RemoteChangeNotificationTests.insertNote("draft", into: context)
        try context.save()
        let id = note.objectID
        let viewContext = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        viewContext.persistentStoreCoordinator = observer
        viewContext.automaticallyMergesChangesFromParent = true
        // The view context shows the note (and keeps it: a context holds its objects weakly).
        let shown = try viewContext.performAndWait { try viewContext.existingObject(with: id) }
        #expect(viewContext.performAndWait { shown.value(forKey: "title") as? String } == "draft")
        let recorder = RemoteChangeRecorder(observer)
        let lastToken = observer.currentPersistentHistoryToken(fromStores: nil)

        await #expect(processExitsWith: .success) { [path = url.path as String] in
            let (_, context) = try RemoteChangeNotificationTests.open(URL(fileURLWithPath: path), options: [NSPersistentHistoryTrackingKey: true as NSNumber])
            let note = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Note"))[0]
            note.setValue("from another process", forKey: "title")
            RemoteChangeNotificationTests.insertNote("second", into: context)
            try context.save()
        }

        let saved = try #require(observer.currentPersistentHistoryToken(fromStores: nil))
        let token = try #require(recorder.wait(forToken: saved), "the notification of the other process's save")
        let (title, count) = try RemoteChangeMerging.merge(after: lastToken, upTo: token, into: viewContext, id: id)
        #expect(title == "from another process")
        #expect(count == 2)
        withExtendedLifetime((folder, shown)) {}
    }

    @Test func anotherProcessesBatchRequestIsPosted() async throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (observer, _) = try RemoteChangeNotificationTests.open(url, options: RemoteChangeNotificationTests.observing)
        let recorder = RemoteChangeRecorder(observer)
        await #expect(processExitsWith: .success) { [path = url.path as String] in
            let (_, context) = try RemoteChangeNotificationTests.open(URL(fileURLWithPath: path), options: [NSPersistentHistoryTrackingKey: true as NSNumber])
            _ = try context.execute(NSBatchInsertRequest(entityName: "Note", objects: [["title": "a"], ["title": "b"]]))
        }
        // (Its token is the last transaction's: batch requests record no history yet.)
        let note = try #require(recorder.wait().last)
        #expect(note.userInfo?[NSStoreUUIDKey] as? String == observer.persistentStores[0].identifier)
        withExtendedLifetime(folder) {}
    }

    #if os(Linux)
    /// The watch has no thread of its own; its descriptors (the `inotify` one, the connection
    /// that reads `data_version`) close when the store is removed or its coordinator goes away.
    /// Counted in a child process, where no other test opens files meanwhile.
    @Test func theWatchLeavesNoDescriptorBehind() async throws {
        let folder = try TemporaryFolder()
        await #expect(processExitsWith: .success) { [path = folder.path as String] in
            func descriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }
            /// The count once it has not changed for 100 ms (descriptors close on other threads).
            func settled() -> Int {
                var count = descriptors()
                for _ in 0..<50 {
                    Thread.sleep(forTimeInterval: 0.1)
                    let now = descriptors()
                    if now == count { break }
                    count = now
                }
                return count
            }
            let url = URL(fileURLWithPath: path).appendingPathComponent("Notes.sqlite")
            func watchAndSave() throws -> NSPersistentStoreCoordinator {
                let (coordinator, context) = try RemoteChangeNotificationTests.open(url, options: RemoteChangeNotificationTests.observing)
                let recorder = RemoteChangeRecorder(coordinator)
                RemoteChangeNotificationTests.insertNote("n", into: context)
                try context.save()
                guard recorder.wait().count >= 1, (coordinator.persistentStores[0] as? SQLiteStore)?.changeChannel?.isWatching == true else {
                    throw CocoaError(.featureUnsupported)
                }
                return coordinator
            }
            // Once first, so that what lives on (dispatch's own descriptors) is in the baseline.
            let first = try watchAndSave()
            try first.remove(first.persistentStores[0])
            let baseline = settled()
            let removed = try watchAndSave()
            try removed.remove(removed.persistentStores[0])
            guard settled() <= baseline else { exit(1) }
            _ = try watchAndSave() // the coordinator goes away with its store
            guard settled() <= baseline else { exit(2) }
        }
        withExtendedLifetime(folder) {}
    }
    #endif

    // MARK: Optimistic locking across processes

    /// Counters: `value` for all writers, `p0`…`p3` one per writer.
    static func counterModel() -> NSManagedObjectModel {
        let counter = NSEntityDescription()
        counter.name = "Counter"
        counter.properties = ["name", "value", "p0", "p1", "p2", "p3"].map { name in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = name == "name" ? .stringAttributeType : .integer64AttributeType
            attribute.defaultValue = name == "name" ? nil : 0
            return attribute
        }
        let model = NSManagedObjectModel()
        model.entities = [counter]
        return model
    }

    static let processes = 4
    static let increments = 50
    static let counters = 3

    /// A store of ``counters`` counters at 0.
    static func makeCounters(at url: URL) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: counterModel())
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for i in 0..<counters {
            NSEntityDescription.insertNewObject(forEntityName: "Counter", into: context).setValue("c\(i)", forKey: "name")
        }
        try context.save()
        try coordinator.remove(store)
    }

    /// In a child: ``increments`` saves, each adding 1 to `key` of every counter. With
    /// `NSErrorMergePolicy` a conflict (another process saved the row since it was read) throws
    /// 133020 and the save is done again on fresh rows; a merge-by-property policy resolves
    /// the conflict itself (the other processes change other properties).
    static func increment(_ path: String, key: String, mergePolicy: NSMergePolicy) throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: counterModel())
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: path), options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.mergePolicy = mergePolicy
        var saved = 0, conflicts = 0
        while saved < increments {
            for counter in try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter")) {
                counter.setValue((counter.value(forKey: key) as? Int ?? 0) + 1, forKey: key)
            }
            do {
                try context.save()
                saved += 1
            } catch let error as NSError where error.domain == NSCocoaErrorDomain && error.code == NSManagedObjectMergeError {
                conflicts += 1
                guard conflicts < 10_000 else { throw error }
                context.reset()
            }
        }
    }

    /// Runs ``processes`` children at once, each running ``increment(_:key:mergePolicy:)`` with
    /// `policy`: "error" (all on `value`) or "property" (child i on `pi`).
    static func runProcesses(on url: URL, policy: String) async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<processes {
                group.addTask {
                    await #expect(processExitsWith: .success) { [path = url.path as String, worker = worker as Int, policy = policy as String] in
                        if policy == "error" {
                            try ManyProcessesTests.increment(path, key: "value", mergePolicy: NSMergePolicy(merge: .errorMergePolicyType))
                        } else {
                            try ManyProcessesTests.increment(path, key: "p\(worker)", mergePolicy: NSMergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType))
                        }
                    }
                }
            }
        }
    }

    /// The counters' values by name, and SQLite's `integrity_check`.
    static func read(_ url: URL) throws -> (rows: [[String?]], integrity: String?) {
        (try RawSQLite.query(url.path, "SELECT ZNAME, ZVALUE, ZP0, ZP1, ZP2, ZP3 FROM ZCOUNTER ORDER BY ZNAME"),
         try RawSQLite.query(url.path, "PRAGMA integrity_check").first?.first ?? nil)
    }

    /// "error": every process increments `value` (with `NSErrorMergePolicy`, retrying on
    /// conflict), which ends at processes × increments. "property": process i increments `pi`
    /// (merging by property), each of which ends at increments.
    @Test(arguments: ["error", "property"])
    func processesUpdatingTheSameRowsLoseNoUpdate(policy: String) async throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Counters.sqlite")
        try Self.makeCounters(at: url)
        await Self.runProcesses(on: url, policy: policy)
        let (rows, integrity) = try Self.read(url)
        #expect(integrity == "ok")
        #expect(rows.count == Self.counters)
        let expected = policy == "error" ? ["\(Self.processes * Self.increments)", "0", "0", "0", "0"]
            : ["0"] + Array(repeating: "\(Self.increments)", count: Self.processes)
        #expect(rows.allSatisfy { Array($0[1...]) == expected }, "\(rows)")
        withExtendedLifetime(folder) {}
    }

    // MARK: The write lock

    /// A write lock another connection holds longer than the store's timeout
    /// (`NSPersistentStoreTimeoutOption`) fails the save with an error that says so, and
    /// nothing is written.
    @Test func aWriteLockHeldPastTheTimeoutFailsTheSave() throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Notes.sqlite")
        let (_, context) = try RemoteChangeNotificationTests.open(url, options: [NSPersistentStoreTimeoutOption: 0.2 as NSNumber], model: HistoryTestModel.make())
        var raw: OpaquePointer?
        try #require(sqlite3_open(url.path, &raw) == SQLITE_OK)
        defer { sqlite3_close(raw) }
        try #require(sqlite3_exec(raw, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        RemoteChangeNotificationTests.insertNote("blocked", into: context)
        let start = Date()
        #expect {
            try context.save()
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSSQLiteError
                && (error.userInfo[NSSQLiteErrorDomain] as? Int).map { $0 & 0xff } == Int(SQLITE_BUSY)
                && error.localizedDescription.contains("locked")
        }
        #expect(Date().timeIntervalSince(start) >= 0.15)
        #expect(sqlite3_exec(raw, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        #expect(try RawSQLite.query(url.path, "SELECT count(*) FROM ZNOTE").first?.first == "0")
        // Once the lock is free, the same changes save.
        try context.save()
        #expect(try RawSQLite.query(url.path, "SELECT count(*) FROM ZNOTE").first?.first == "1")
        withExtendedLifetime(folder) {}
    }
}
