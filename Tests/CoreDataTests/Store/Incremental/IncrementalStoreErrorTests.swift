import Foundation
import Testing
@testable import CoreData

/// Store classes that break Apple's contract: adding or using them throws an `NSError`, and
/// nothing crashes.
@Suite("NSIncrementalStore: a store that breaks the contract")
struct IncrementalStoreErrorTests {
    final class ThrowingMetadataStore: NSIncrementalStore, @unchecked Sendable {
        override func loadMetadata() throws {
            throw NSError(domain: NSCocoaErrorDomain, code: NSPersistentStoreOpenError, userInfo: [NSLocalizedDescriptionKey: "no such server"])
        }
    }

    final class NoUUIDStore: NSIncrementalStore, @unchecked Sendable {
        override func loadMetadata() throws { metadata = [NSStoreTypeKey: "NoUUIDStore"] }
    }

    /// Answers every fetch with a string.
    final class WrongResultStore: NSIncrementalStore, @unchecked Sendable {
        override func loadMetadata() throws { metadata = [NSStoreTypeKey: "WrongResultStore", NSStoreUUIDKey: "W"] }
        override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any { "not an array" }
        override func newValuesForObject(with objectID: NSManagedObjectID, with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
            NSIncrementalStoreNode(objectID: objectID, withValues: ["name": 12], version: 1)
        }
    }

    /// Answers every fetch of IDs with a car's ID, whatever the entity asked for.
    final class WrongEntityStore: NSIncrementalStore, @unchecked Sendable {
        override func loadMetadata() throws { metadata = [NSStoreTypeKey: "WrongEntityStore", NSStoreUUIDKey: "E"] }
        override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
            [newObjectID(for: persistentStoreCoordinator!.managedObjectModel.entitiesByName["Car"]!, referenceObject: 1)]
        }
    }

    /// Gives one ID fewer than it is asked for.
    final class ShortIDsStore: NSIncrementalStore, @unchecked Sendable {
        override func loadMetadata() throws { metadata = [NSStoreTypeKey: "ShortIDsStore", NSStoreUUIDKey: "S"] }
        override func obtainPermanentIDs(for array: [NSManagedObject]) throws -> [NSManagedObjectID] {
            array.dropFirst().map { newObjectID(for: $0.entity, referenceObject: UUID().uuidString) }
        }
        override func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext?) throws -> Any {
            Issue.record("execute(_:with:) ran for a save whose IDs were refused")
            return [Any]()
        }
    }

    func add(_ storeClass: AnyClass, _ type: String) throws -> NSPersistentStoreCoordinator {
        NSPersistentStoreCoordinator.registerStoreClass(storeClass, forStoreType: type)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: TestModel.make())
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: URL(string: "test://\(type)")!)
        return coordinator
    }

    @Test("loadMetadata() that throws: its error, and no store")
    func loadMetadataThrows() throws {
        let error = try #require(throws: NSError.self) { try add(ThrowingMetadataStore.self, "ThrowingMetadataStore") }
        #expect(error.code == NSPersistentStoreOpenError)
        #expect(error.localizedDescription.contains("no such server"))
    }

    @Test("loadMetadata() that leaves out NSStoreUUIDKey: 134080 naming the keys")
    func missingUUID() throws {
        let error = try #require(throws: NSError.self) { try add(NoUUIDStore.self, "NoUUIDStore") }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreOpenError)
        #expect(error.localizedDescription.contains("NSStoreUUIDKey"))
    }

    @Test("A class that is not an NSIncrementalStore: 134000")
    func notIncremental() throws {
        let error = try #require(throws: NSError.self) { try add(NSPersistentStore.self, "PlainStore") }
        #expect(error.code == NSPersistentStoreInvalidTypeError)
    }

    @Test("execute(_:with:) returning the wrong type, or a node with a wrong value: 134070")
    func wrongResults() throws {
        let coordinator = try add(WrongResultStore.self, "WrongResultStore")
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let error = try #require(throws: NSError.self) { try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")) }
        #expect(error.code == NSPersistentStoreOperationError)
        #expect(error.localizedDescription.contains("String"))
        let count = try #require(throws: NSError.self) { try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) }
        #expect(count.code == NSPersistentStoreOperationError)

        let store = try #require(coordinator.persistentStores.first as? NSIncrementalStore)
        let id = store.newObjectID(for: coordinator.managedObjectModel.entitiesByName["Person"]!, referenceObject: 1)
        #expect(throws: NSError.self) { try coordinator.row(for: id) }
    }

    @Test("execute(_:with:) returning objects of another entity: 134070, never objects of the wrong type")
    func wrongEntity() throws {
        let coordinator = try add(WrongEntityStore.self, "WrongEntityStore")
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let request = NSFetchRequest<NSManagedObjectID>(entityName: "Person")
        request.resultType = .managedObjectIDResultType
        let error = try #require(throws: NSError.self) { try context.fetch(request) }
        #expect(error.code == NSPersistentStoreOperationError)
        #expect(error.localizedDescription.contains("Person"))
    }

    @Test("obtainPermanentIDs(for:) giving the wrong number of IDs: 134030, nothing saved, the objects still new")
    func shortIDs() throws {
        let coordinator = try add(ShortIDsStore.self, "ShortIDsStore")
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        for name in ["Ada", "Bea"] {
            NSEntityDescription.insertNewObject(forEntityName: "Person", into: context).setValue(name, forKey: "name")
        }
        let error = try #require(throws: NSError.self) { try context.save() }
        #expect(error.code == NSPersistentStoreSaveError)
        #expect(error.localizedDescription.contains("1 IDs for 2 objects"))
        #expect(context.insertedObjects.count == 2)
        #expect(context.insertedObjects.allSatisfy { $0.objectID.isTemporaryID })
    }
}
