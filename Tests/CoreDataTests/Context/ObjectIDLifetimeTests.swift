import Foundation
import Testing
@testable import CoreData

/// An ID keeps what it names: it answers for its entity and store after its stack has gone,
/// and lets the store go with it.
@Suite("Object IDs keep their entity and store")
struct ObjectIDLifetimeTests {
    @Test func anIDOutlivesItsStackAndLetsItsStoreGo() throws {
        var id: NSManagedObjectID?
        weak var store: NSPersistentStore?
        try {
            let stack = try TestStack()
            let person = stack.insert("Person", ["name": "kept"])
            try stack.context.save()
            id = person.objectID
            store = stack.coordinator.persistentStores.first
        }()
        #expect(id?.entity.name == "Person")
        #expect(id?.persistentStore != nil)
        #expect(id?.persistentStore === store)
        #expect(id?.isTemporaryID == false)
        id = nil
        #expect(store == nil, "the last ID gave its store back")
    }
}
