import Foundation
import Testing
@testable import CoreData

/// The coordinator's class-level and lifecycle methods on a registered store type
/// (`JSONFileStore`, an `NSAtomicStore`): metadata without a coordinator through the registered
/// class, destroy, replace and migrate as Apple does for a store of its own file, and
/// `didAdd(to:)`/`willRemove(from:)` on the store.
@Suite("A registered store type: metadata, destroy, replace, migrate, didAdd and willRemove")
struct StoreClassLifecycleTests {
    typealias Stack = AtomicStoreTests.Stack

    /// A stack whose file holds Ada, who owns a Beetle.
    static func stackWithAda() throws -> Stack {
        let stack = try Stack()
        let context = stack.context()
        let ada = stack.insert("Person", ["name": "Ada"], in: context)
        _ = stack.insert("Car", ["name": "Beetle", "owner": ada], in: context)
        try context.save()
        return stack
    }

    static func names(_ coordinator: NSPersistentStoreCoordinator, _ entity: String) throws -> [String] {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request).map { object in
            let owner = object.entity.relationshipsByName["owner"] == nil ? nil
                : (object.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String
            return (object.value(forKey: "name") as? String ?? "?") + (owner.map { " of \($0)" } ?? "")
        }
    }

    @Test("metadataForPersistentStore and setMetadata on the coordinator ask the registered class")
    func metadataWithoutACoordinator() throws {
        let stack = try Self.stackWithAda()
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: JSONFileStore.storeType, at: stack.url)
        #expect(metadata[NSStoreUUIDKey] as? String == stack.store.identifier)
        var changed = metadata
        changed["imported"] = "yes"
        try NSPersistentStoreCoordinator.setMetadata(changed, forPersistentStoreOfType: JSONFileStore.storeType, at: stack.url)
        #expect(try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: JSONFileStore.storeType, at: stack.url)["imported"] as? String == "yes")
        try stack.reopen()
        #expect(stack.store.metadata["imported"] as? String == "yes")
        #expect(try Self.names(stack.coordinator, "Person") == ["Ada"])

        let error = try #require(throws: NSError.self) {
            try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: "NoSuchStore", at: stack.url)
        }
        #expect(error.code == NSPersistentStoreInvalidTypeError)
    }

    @Test("addPersistentStore calls didAdd(to:), remove(_:) calls willRemove(from:)")
    func didAddAndWillRemove() throws {
        let stack = try Stack()
        #expect(stack.store.lifecycle == ["didAdd"])
        try stack.coordinator.remove(stack.store)
        #expect(stack.store.lifecycle == ["didAdd", "willRemove"])
    }

    @Test("destroyPersistentStore removes the store and deletes its file")
    func destroy() throws {
        let stack = try Self.stackWithAda()
        #expect(FileManager.default.fileExists(atPath: stack.url.path))
        try stack.coordinator.destroyPersistentStore(at: stack.url, ofType: JSONFileStore.storeType)
        #expect(stack.coordinator.persistentStores.isEmpty)
        #expect(stack.store.lifecycle == ["didAdd", "willRemove"])
        #expect(!FileManager.default.fileExists(atPath: stack.url.path))
    }

    @Test("replacePersistentStore copies the source's file over the destination's")
    func replace() throws {
        let source = try Self.stackWithAda()
        let destination = try Stack()
        let context = destination.context()
        _ = destination.insert("Person", ["name": "Bea"], in: context)
        try context.save()
        try destination.coordinator.remove(destination.store)

        try destination.coordinator.replacePersistentStore(at: destination.url, withPersistentStoreFrom: source.url, ofType: JSONFileStore.storeType)
        try destination.reopen()
        #expect(try Self.names(destination.coordinator, "Person") == ["Ada"])
        #expect(try Self.names(source.coordinator, "Person") == ["Ada"], "the source is as it was")

        let missing = source.folder.url.appendingPathComponent("Missing.json")
        let error = try #require(throws: NSError.self) {
            try destination.coordinator.replacePersistentStore(at: destination.url, withPersistentStoreFrom: missing, ofType: JSONFileStore.storeType)
        }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSFileReadNoSuchFileError)
        #expect(try Self.names(destination.coordinator, "Person") == ["Ada"])
    }

    @Test("migratePersistentStore moves an atomic store to SQLite and back, by loading and saving its objects")
    func migrate() throws {
        let stack = try Self.stackWithAda()
        let sqliteURL = stack.folder.url.appendingPathComponent("Moved.sqlite")
        let sqlite = try stack.coordinator.migratePersistentStore(stack.store, to: sqliteURL, withType: NSSQLiteStoreType)
        #expect(stack.coordinator.persistentStores.map { $0 === sqlite } == [true])
        #expect(stack.store.lifecycle == ["didAdd", "willRemove"])
        #expect(try Self.names(stack.coordinator, "Car") == ["Beetle of Ada"])

        let jsonURL = stack.folder.url.appendingPathComponent("Back.json")
        let json = try #require(try stack.coordinator.migratePersistentStore(sqlite, to: jsonURL, withType: JSONFileStore.storeType) as? JSONFileStore)
        #expect(json.lifecycle == ["didAdd"])
        #expect(try Self.names(stack.coordinator, "Car") == ["Beetle of Ada"])
        // What the new store saved is in its file.
        let (reopened, _) = try Stack.open(stack.model, jsonURL)
        #expect(try Self.names(reopened, "Car") == ["Beetle of Ada"])
        #expect(try Self.names(reopened, "Person") == ["Ada"])
    }
}
