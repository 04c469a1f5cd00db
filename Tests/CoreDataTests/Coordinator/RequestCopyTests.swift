import Foundation
import Testing
@testable import CoreData

/// Every store request copies (`NSCopying`, as Apple's `NSPersistentStoreRequest`): a new object
/// with the same options, which changes without changing the original. (Foundation's `copy()` on
/// Linux returns the object itself for a class that does not copy.)
@Suite struct RequestCopyTests {
    @Test func batchRequestsCopyTheirOptions() throws {
        let stack = try TestStack()
        let update = NSBatchUpdateRequest(entityName: "Car")
        update.predicate = NSPredicate(format: "year < 2000")
        update.propertiesToUpdate = ["year": 2000]
        update.resultType = .updatedObjectsCountResultType
        update.includesSubentities = false
        update.affectedStores = stack.coordinator.persistentStores
        let updateCopy = try #require(update.copy() as? NSBatchUpdateRequest)
        #expect(updateCopy !== update && updateCopy.entityName == "Car" && updateCopy.predicate == update.predicate)
        #expect(updateCopy.resultType == .updatedObjectsCountResultType && !updateCopy.includesSubentities)
        #expect(updateCopy.propertiesToUpdate?["year"] as? Int == 2000 && updateCopy.affectedStores?.count == 1)
        updateCopy.predicate = nil
        #expect(update.predicate != nil)

        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
        fetch.predicate = NSPredicate(format: "year > 1990")
        let delete = NSBatchDeleteRequest(fetchRequest: fetch)
        delete.resultType = .resultTypeCount
        let deleteCopy = try #require(delete.copy() as? NSBatchDeleteRequest)
        #expect(deleteCopy !== delete && deleteCopy.resultType == .resultTypeCount)
        #expect(deleteCopy.fetchRequest !== delete.fetchRequest && deleteCopy.fetchRequest.predicate == fetch.predicate)
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let byIDs = try #require(NSBatchDeleteRequest(objectIDs: [car.objectID]).copy() as? NSBatchDeleteRequest)
        #expect(byIDs.objectIDs == [car.objectID])

        let insert = NSBatchInsertRequest(entityName: "Car", objects: [["name": "b"]])
        insert.resultType = .objectIDs
        let insertCopy = try #require(insert.copy() as? NSBatchInsertRequest)
        #expect(insertCopy !== insert && insertCopy.resultType == .objectIDs)
        #expect(insertCopy.objectsToInsert?.first?["name"] as? String == "b")
        // The copy runs as the original would.
        let result = try stack.context.execute(insertCopy) as? NSBatchInsertResult
        #expect((result?.result as? [NSManagedObjectID])?.count == 1)
    }

    @Test func historyAndAsynchronousAndSaveRequestsCopyTheirOptions() throws {
        let history = NSPersistentHistoryChangeRequest.fetchHistory(after: Date(timeIntervalSince1970: 5))
        history.resultType = .count
        history.fetchRequest = NSPersistentHistoryTransaction.fetchRequest
        let historyCopy = try #require(history.copy() as? NSPersistentHistoryChangeRequest)
        #expect(historyCopy !== history && historyCopy.resultType == .count)
        #expect(historyCopy.fetchRequest != nil && historyCopy.fetchRequest !== history.fetchRequest)

        let fetch = NSFetchRequest<NSManagedObject>(entityName: "Car")
        let asynchronous = NSAsynchronousFetchRequest(fetchRequest: fetch) { _ in }
        asynchronous.estimatedResultCount = 12
        let asynchronousCopy = try #require(asynchronous.copy() as? NSAsynchronousFetchRequest<NSManagedObject>)
        #expect(asynchronousCopy !== asynchronous && asynchronousCopy.estimatedResultCount == 12)
        #expect(asynchronousCopy.fetchRequest !== fetch && asynchronousCopy.fetchRequest.entityName == "Car" && asynchronousCopy.completionBlock != nil)
        asynchronousCopy.fetchRequest.predicate = NSPredicate(format: "year > 2000")
        #expect(fetch.predicate == nil)

        let save = NSSaveChangesRequest(inserted: nil, updated: nil, deleted: nil, locked: nil)
        #expect((save.copy() as? NSSaveChangesRequest).map { $0 !== save } == true)
        let fetchCopy = try #require(fetch.copy() as? NSFetchRequest<NSManagedObject>)
        #expect(fetchCopy !== fetch && fetchCopy.entityName == "Car")
    }

    @Test func smallerApplePieces() throws {
        #expect(NSPersistentStore.StoreType.xml.rawValue == NSXMLStoreType)
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        let element = NSFetchIndexElementDescription(property: name, collationType: .binary)
        let index = NSFetchIndexDescription(name: "byName", elements: [element])
        #expect(element.indexDescription === index)
        let other = NSFetchIndexElementDescription(property: name, collationType: .binary)
        index.elements = [other]
        #expect(other.indexDescription === index)
    }
}
