import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A store already added to a coordinator is refused a second time (134081, as Apple's "Can't
/// add the same store twice"), whatever its type and however its location is spelled: two
/// stores on one file read every row twice, and the second's save writes over the first's.
@Suite("Adding the same store twice")
struct SameStoreTwiceTests {
    @Test("An atomic store's file added again is refused, and the first store's rows stay single")
    func anAtomicStoreTwice() throws {
        let stack = try AtomicStoreTests.Stack()
        let context = stack.context()
        _ = stack.insert("Person", ["name": "Ada"], in: context)
        try context.save()
        let error = #expect(throws: NSError.self) {
            try stack.coordinator.addPersistentStore(ofType: JSONFileStore.storeType, configurationName: nil, at: stack.url)
        }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == 134081)
        #expect((error?.userInfo[NSAffectedStoresErrorKey] as? [NSPersistentStore])?.first === stack.store)
        #expect(stack.coordinator.persistentStores.count == 1)
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 1)
    }

    @Test("A SQLite file reached through a symbolic link, or a copy with the same UUID, is refused")
    func aSQLiteFileByAnotherPathOrACopy() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let folder = try TemporaryFolder()
        let link = folder.url.appendingPathComponent("linked")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: stack.url.deletingLastPathComponent())
        let viaLink = link.appendingPathComponent(stack.url.lastPathComponent)
        let error = #expect(throws: NSError.self) {
            try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: viaLink)
        }
        #expect(error?.code == 134081)
        // The same path again: the same code.
        let again = #expect(throws: NSError.self) {
            try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: stack.url)
        }
        #expect(again?.code == 134081)
        // A copy of the file keeps the store's UUID: its object IDs would be the first store's.
        let copy = folder.url.appendingPathComponent("Copy.sqlite")
        try NSPersistentStoreCoordinator(managedObjectModel: stack.model)
            .replacePersistentStore(at: copy, withPersistentStoreFrom: stack.url, ofType: NSSQLiteStoreType)
        let copied = #expect(throws: NSError.self) {
            try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: copy)
        }
        #expect(copied?.code == 134081)
        #expect(stack.coordinator.persistentStores.count == 1)
        #expect(try stack.fetch("Car").count == 1)
    }

    @Test("In-memory stores, each its own, are never the same store")
    func inMemoryStoresAreEachTheirOwn() throws {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        let url = URL(string: "memory://shared")!
        _ = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: url)
        _ = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: url)
        _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"))
        _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"))
        #expect(coordinator.persistentStores.count == 4)
    }
}
