import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The coordinator's notifications about its list of stores.
@Suite struct StoresDidChangeTests {
    /// The notifications of `names` about `coordinator` or its stores, in order, while `body` runs.
    private func notifications(of coordinator: NSPersistentStoreCoordinator, _ body: () throws -> Void) rethrows -> [Notification] {
        final class Box: @unchecked Sendable { let lock = NSLock(); var list: [Notification] = [] }
        let box = Box()
        let observers = [Notification.Name.NSPersistentStoreCoordinatorStoresDidChange, .NSPersistentStoreCoordinatorWillRemoveStore].map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { notification in
                let ours = (notification.object as AnyObject?) === coordinator
                    || (notification.object as? NSPersistentStore)?.persistentStoreCoordinator === coordinator
                if ours { box.lock.withLock { box.list.append(notification) } }
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        try body()
        return box.lock.withLock { box.list }
    }

    @Test func addingAndRemovingAStorePostWithTheStores() throws {
        let folder = try TemporaryFolder()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        var store: NSPersistentStore?
        let added = try notifications(of: coordinator) {
            store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.url.appendingPathComponent("A.sqlite"))
        }
        #expect(added.map(\.name) == [.NSPersistentStoreCoordinatorStoresDidChange])
        #expect((added.first?.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore])?.first === store)
        #expect(added.first?.userInfo?[NSRemovedPersistentStoresKey] == nil)

        let removed = try notifications(of: coordinator) { try coordinator.remove(store!) }
        #expect(removed.map(\.name) == [.NSPersistentStoreCoordinatorWillRemoveStore, .NSPersistentStoreCoordinatorStoresDidChange])
        #expect(removed.first?.object as AnyObject? === store)
        #expect((removed.last?.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore])?.first === store)
        #expect(removed.last?.object as AnyObject? === coordinator)
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

    @Test func aMigrationPostsTheNewStoreAddedAndTheOldRemoved() throws {
        let stack = try TestStack()
        let old = stack.coordinator.persistentStores[0]
        var moved: NSPersistentStore?
        let posted = try notifications(of: stack.coordinator) {
            moved = try stack.coordinator.migratePersistentStore(old, to: stack.directory.appendingPathComponent("Moved.sqlite"), withType: NSSQLiteStoreType)
        }
        let added = posted.compactMap { $0.userInfo?[NSAddedPersistentStoresKey] as? [NSPersistentStore] }.flatMap { $0 }
        let removed = posted.compactMap { $0.userInfo?[NSRemovedPersistentStoresKey] as? [NSPersistentStore] }.flatMap { $0 }
        #expect(added.count == 1 && added.first === moved)
        #expect(removed.count == 1 && removed.first === old)
    }
}
