import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The coordinator's notifications about its list of stores.
@Suite struct StoresDidChangeTests {
    /// The store notifications about `coordinator`, in order, while `body` runs, each with the
    /// number of stores the coordinator had when it was posted.
    private func notifications(of coordinator: NSPersistentStoreCoordinator, _ body: () throws -> Void) rethrows -> [(notification: Notification, stores: Int)] {
        final class Box: @unchecked Sendable { let lock = NSLock(); var list: [(Notification, Int)] = [] }
        let box = Box()
        let observers = [Notification.Name.NSPersistentStoreCoordinatorStoresDidChange, .NSPersistentStoreCoordinatorWillRemoveStore].map { name in
            NotificationCenter.default.addObserver(forName: name, object: coordinator, queue: nil) { notification in
                let count = coordinator.persistentStores.count // an observer may call back into the coordinator
                box.lock.withLock { box.list.append((notification, count)) }
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        try body()
        return box.lock.withLock { box.list.map { (notification: $0.0, stores: $0.1) } }
    }

    @Test func addingAndRemovingAStorePostWithTheStores() throws {
        let folder = try TemporaryFolder()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        var store: NSPersistentStore?
        let added = try notifications(of: coordinator) {
            store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.url.appendingPathComponent("A.sqlite"))
        }
        #expect(added.map(\.notification.name) == [.NSPersistentStoreCoordinatorStoresDidChange])
        #expect((added.first?.notification.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore])?.first === store)
        #expect(added.first?.notification.userInfo?[NSRemovedPersistentStoresKey] == nil)
        #expect(added.first?.stores == 1)

        let removed = try notifications(of: coordinator) { try coordinator.remove(store!) }
        #expect(removed.map(\.notification.name) == [.NSPersistentStoreCoordinatorWillRemoveStore, .NSPersistentStoreCoordinatorStoresDidChange])
        #expect(removed.map(\.stores) == [1, 0])
        #expect(removed.first?.notification.userInfo == nil)
        #expect((removed.last?.notification.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore])?.first === store)
        // Removed already: a second removal throws and posts nothing.
        #expect(notifications(of: coordinator) { #expect(throws: NSError.self) { try coordinator.remove(store!) } }.isEmpty)
    }

    @Test func aStoreThatFailsToOpenPostsNothing() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("NotAStore.sqlite")
        try Data("not a database".utf8).write(to: file)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let posted = notifications(of: coordinator) {
            #expect(throws: NSError.self) { try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: file) }
        }
        #expect(posted.isEmpty)
    }

    /// A migration is one change, posted once it is complete: the new store added and the old
    /// removed, with the identifier change when the store's type changes.
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func aMigrationPostsOneChangeOnceComplete(to type: String) throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "moved"])
        try stack.context.save()
        let old = stack.coordinator.persistentStores[0]
        var moved: NSPersistentStore?
        let posted = try notifications(of: stack.coordinator) {
            moved = try stack.coordinator.migratePersistentStore(old, to: stack.directory.appendingPathComponent("Moved.sqlite"), withType: type)
        }
        #expect(posted.map(\.notification.name) == [.NSPersistentStoreCoordinatorWillRemoveStore, .NSPersistentStoreCoordinatorStoresDidChange])
        let change = try #require(posted.last)
        #expect(change.stores == 1)
        #expect((change.notification.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore])?.map(ObjectIdentifier.init) == [ObjectIdentifier(moved!)])
        #expect((change.notification.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore])?.map(ObjectIdentifier.init) == [ObjectIdentifier(old)])
        let changedUUID = change.notification.userInfo?[NSUUIDChangedPersistentStoresKey] as? [NSPersistentStore]
        if type == NSSQLiteStoreType {
            #expect(changedUUID == nil && moved?.identifier == old.identifier)
        } else {
            #expect(changedUUID?.map(ObjectIdentifier.init) == [ObjectIdentifier(old), ObjectIdentifier(moved!)])
        }
    }
}
