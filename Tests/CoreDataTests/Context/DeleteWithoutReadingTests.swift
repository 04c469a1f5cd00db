import Foundation
import Testing
@testable import CoreData

/// Deleting an object by ID without reading it first (issue 21, B9): the object has no
/// snapshot, so there is no version to hold the row to; Apple deletes it without a conflict.
@Suite("Deleting an object never read")
struct DeleteWithoutReadingTests {
    /// A model whose entity has no relationships: deleting its objects runs no delete rule, so
    /// nothing reads them.
    private func stack(inMemory: Bool = false) throws -> TestStack {
        try TestStack(model: valuesOnlyItemModel(), inMemory: inMemory)
    }

    private func count(_ context: NSManagedObjectContext) throws -> Int {
        try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item"))
    }

    @Test(arguments: [false, true])
    func anObjectSavedByAnotherContextDeletedByID(inMemory: Bool) throws {
        let stack = try stack(inMemory: inMemory)
        let writer = stack.newContext()
        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: writer)
        item.setValue(7, forKey: "number")
        try writer.save()
        let id = item.objectID

        let context = stack.context
        let fault = context.object(with: id)
        #expect(fault.isFault)
        context.delete(fault)
        try context.save()
        #expect(try count(context) == 0)
    }

    @Test(arguments: [false, true])
    func anObjectSavedEarlierInTheSameContextDeletedByID(inMemory: Bool) throws {
        let stack = try stack(inMemory: inMemory)
        let context = stack.context
        let id = try { () throws -> NSManagedObjectID in
            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
            item.setValue(1, forKey: "number")
            try context.save()
            return item.objectID
        }()
        #expect(context.registeredObject(for: id) == nil, "the saved object has gone")
        context.delete(context.object(with: id))
        try context.save()
        #expect(try count(context) == 0)
    }

    /// Another context changed the row since: the delete still goes ahead, since this context
    /// never read the row.
    @Test func aRowChangedElsewhereIsDeletedWhenItsObjectWasNeverRead() throws {
        let stack = try stack()
        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: stack.context)
        try stack.context.save()
        let id = item.objectID
        let fresh = stack.newContext()
        let fault = fresh.object(with: id)
        item.setValue(2, forKey: "number")
        try stack.context.save()
        fresh.delete(fault)
        try fresh.save()
        #expect(try count(stack.context) == 0)
    }

    /// The object was read, and the row changed since: still a conflict.
    @Test func aRowChangedSinceItsObjectWasReadConflicts() throws {
        let stack = try stack()
        let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: stack.context)
        try stack.context.save()
        let fresh = stack.newContext()
        let read = try fresh.existingObject(with: item.objectID)
        item.setValue(2, forKey: "number")
        try stack.context.save()
        fresh.delete(read)
        let error = try #require(throws: NSError.self) { try fresh.save() }
        #expect(error.code == NSManagedObjectMergeError)
        #expect(try count(stack.context) == 1)
    }
}
