import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Issue 22: a migration never blocks the caller. A description whose
/// `shouldAddStoreAsynchronously` is true is loaded (and its store migrated) on a queue of the
/// container's: `loadPersistentStores` returns before the migration, and the handler runs on that
/// queue once the store is migrated and added.
@Suite("Migration off the caller's thread")
struct AsynchronousMigrationTests {
    @Test func anAsynchronousDescriptionMigratesOffTheCallersThread() throws {
        let folder = try TemporaryFolder()
        let name = #"<attribute name="name" optional="YES" attributeType="String"/>"#
        let bundle = try XcodeModelFiles.writeBundle("Async", in: folder.url, versions: [
            ("Async", XcodeModelFiles.entity("Item", [name])),
            ("Async 2", XcodeModelFiles.entity("Item", [name, #"<attribute name="rank" attributeType="Integer 32" defaultValueString="3" usesScalarValueType="YES"/>"#])),
        ], current: "Async 2")
        let url = folder.url.appendingPathComponent("Async.sqlite")
        do {
            let v1 = try NSManagedObjectModel(validatingContentsOf: bundle.appendingPathComponent("Async.xcdatamodel"))
            let stack = try TestStack(model: v1, directory: folder.url)
            for i in 0..<2_000 { stack.insert("Item", ["name": "item \(i)"]) }
            try stack.context.save()
            try FileManager.default.moveItem(at: stack.url, to: url)
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: stack.url.path + suffix) {
                try FileManager.default.moveItem(atPath: stack.url.path + suffix, toPath: url.path + suffix)
            }
        }

        let container = NSPersistentContainer(name: "Async", managedObjectModel: try NSManagedObjectModel(validatingContentsOf: bundle))
        let description = NSPersistentStoreDescription(url: url)
        description.shouldAddStoreAsynchronously = true
        container.persistentStoreDescriptions = [description]
        let caller = UInt(bitPattern: Int(bitPattern: pthread_self()))
        let offCaller = Locked<Bool?>(nil)
        let loadError = Locked<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        container.loadPersistentStores { _, error in
            let here = UInt(bitPattern: Int(bitPattern: pthread_self()))
            offCaller.value = here != caller
            loadError.value = error.map { "\($0)" }
            done.signal()
        }
        // The handler runs on the container's queue once the store is migrated and added.
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(loadError.value == nil)
        #expect(offCaller.value == true, "the handler ran on the caller's thread")
        #expect(container.persistentStoreCoordinator.persistentStores.count == 1)
        #expect(try RawSQLite.query(url.path, "SELECT count(*), min(ZRANK), max(ZRANK) FROM ZITEM") == [["2000", "3", "3"]])
    }
}
