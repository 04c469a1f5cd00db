import Foundation
import Testing
@testable import CoreData

/// Batch requests against what they may touch: several stores, all or none; the stores both
/// `affectedStores` allow; deny rules judged once the request's cascades are known; attributes
/// and entities a batch request may not write.
@Suite("Batch requests: scope")
struct BatchRequestScopeTests {
    /// A stack whose coordinator holds its SQLite file, a store in memory, and a read-only
    /// SQLite file, each with one car. A request's stores are nested in the order of their
    /// keys: the store in memory (its identifier made to sort first), the file, then the
    /// read-only file, written last, inside the others' transactions.
    static func threeStores() throws -> (stack: TestStack, ids: [NSManagedObjectID]) {
        let stack = try TestStack()
        let zed = stack.directory.appendingPathComponent("Zed.sqlite")
        do {
            let writer = NSPersistentStoreCoordinator(managedObjectModel: stack.model)
            let store = try writer.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: zed)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = writer
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: context).setValuesForKeys(["name": "zed", "year": 2003])
            try context.save()
            try writer.remove(store)
        }
        let memory = try stack.coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
        memory.identifier = "!" + memory.identifier
        #expect(NSPersistentStoreCoordinator.saveOrderKey(of: memory) < NSPersistentStoreCoordinator.saveOrderKey(of: stack.coordinator.persistentStores[0]))
        _ = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: zed,
                                                     options: [NSReadOnlyPersistentStoreOption: true])
        stack.insert("Car", ["name": "file", "year": 2001])
        let inMemory = stack.insert("Car", ["name": "memory", "year": 2002])
        stack.context.assign(inMemory, to: memory)
        try stack.context.save()
        let ids = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).map(\.objectID)
        #expect(ids.count == 3)
        return (stack, ids)
    }

    static func cars(_ stack: TestStack) throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        return try stack.newContext().fetch(request).compactMap { "\($0.value(forKey: "name") ?? "")=\($0.value(forKey: "year") ?? "")" }.sorted()
    }

    @Test("A batch delete or update over several stores, one of them failing, changes none of them")
    func severalStoresAllOrNone() throws {
        let (stack, ids) = try Self.threeStores()
        let before = try Self.cars(stack)
        #expect(before == ["file=2001", "memory=2002", "zed=2003"])
        // The read-only file fails after the memory store and the other file wrote their rows.
        #expect(throws: NSError.self) { try stack.context.execute(NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Car"))) }
        #expect(try Self.cars(stack) == before)
        #expect(throws: NSError.self) { try stack.context.execute(NSBatchDeleteRequest(objectIDs: ids)) }
        #expect(try Self.cars(stack) == before)
        let update = NSBatchUpdateRequest(entityName: "Car")
        update.propertiesToUpdate = ["year": NSExpression(format: "year + 10")]
        #expect(throws: NSError.self) { try stack.context.execute(update) }
        #expect(try Self.cars(stack) == before)
        // Without the read-only store, both others change.
        update.affectedStores = Array(stack.coordinator.persistentStores.prefix(2))
        update.resultType = .updatedObjectsCountResultType
        #expect((try stack.context.execute(update) as? NSBatchUpdateResult)?.result as? Int == 2)
        #expect(try Self.cars(stack) == ["file=2011", "memory=2012", "zed=2003"])
    }

    @Test("A batch delete whose fetch request names its stores deletes only theirs")
    func fetchRequestsAffectedStores() throws {
        let (stack, _) = try Self.threeStores()
        let memory = stack.coordinator.persistentStores[1]
        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
        fetch.affectedStores = [memory]
        let delete = NSBatchDeleteRequest(fetchRequest: fetch)
        delete.resultType = .resultTypeCount
        // (Asked of every store, the delete deleted the file's car too, or the read-only file refused it.)
        #expect((try stack.context.execute(delete) as? NSBatchDeleteResult)?.result as? Int == 1)
        #expect(try Self.cars(stack) == ["file=2001", "zed=2003"])
    }

    /// `Order.lines` (cascade) and `Order.primaryLine` (deny), both to `Line`.
    static func orders() -> NSManagedObjectModel {
        let order = NSEntityDescription(), line = NSEntityDescription()
        (order.name, line.name) = ("Order", "Line")
        let name = NSAttributeDescription(), label = NSAttributeDescription()
        (name.name, name.attributeType, label.name, label.attributeType) = ("name", .stringAttributeType, "label", .stringAttributeType)
        func relate(_ name: String, _ toMany: Bool, _ rule: NSDeleteRule, _ back: String, _ backToMany: Bool) -> (NSRelationshipDescription, NSRelationshipDescription) {
            let forward = NSRelationshipDescription(), inverse = NSRelationshipDescription()
            (forward.name, forward.destinationEntity, forward.maxCount, forward.deleteRule) = (name, line, toMany ? 0 : 1, rule)
            (inverse.name, inverse.destinationEntity, inverse.maxCount) = (back, order, backToMany ? 0 : 1)
            forward.inverseRelationship = inverse
            inverse.inverseRelationship = forward
            return (forward, inverse)
        }
        let (lines, lineOrder) = relate("lines", true, .cascadeDeleteRule, "order", false)
        let (primary, primaryOf) = relate("primaryLine", false, .denyDeleteRule, "primaryOf", false)
        order.properties = [name, lines, primary]
        line.properties = [label, lineOrder, primaryOf]
        let model = NSManagedObjectModel()
        model.entities = [line, order]
        return model
    }

    @Test("A deny rule whose objects the same batch delete cascades to does not refuse it", arguments: BatchRequestEdgeTests.kinds)
    func denyOfRowsTheRequestDeletes(_ kind: TestStoreKind?) throws {
        let stack = try BatchRequestEdgeTests.stack(kind, model: Self.orders())
        let order = stack.insert("Order", ["name": "o"])
        let first = stack.insert("Line", ["label": "1", "order": order])
        stack.insert("Line", ["label": "2", "order": order])
        order.setValue(first, forKey: "primaryLine")
        let other = stack.insert("Order", ["name": "kept"])
        let elsewhere = stack.insert("Line", ["label": "3"])
        try stack.context.save()
        let one = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Order"))
        one.fetchRequest.predicate = NSPredicate(format: "name == 'o'")
        one.resultType = .resultTypeCount
        // The order, and by cascade its two lines (its primary line among them).
        #expect((try stack.context.execute(one) as? NSBatchDeleteResult)?.result as? Int == 3)
        #expect(try stack.newContext().count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Line")) == 1)
        // A primary line the request does not delete still refuses it, nothing deleted.
        other.setValue(elsewhere, forKey: "primaryLine")
        try stack.context.save()
        let error = #expect(throws: NSError.self) { try stack.context.execute(NSBatchDeleteRequest(fetchRequest: NSFetchRequest<NSFetchRequestResult>(entityName: "Order"))) }
        #expect(error?.code == NSValidationRelationshipDeniedDeleteError)
        #expect(try stack.newContext().count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Order")) == 1)
    }

    @Test("A batch update refuses a derived attribute; a batch insert refuses an abstract entity", arguments: BatchRequestEdgeTests.kinds)
    func derivedAndAbstractRefused(_ kind: TestStoreKind?) throws {
        let blog = try BatchRequestEdgeTests.stack(kind, model: try DerivedAttributeTests.blog())
        blog.insert("Author", ["name": "Ada"])
        try blog.context.save()
        let update = NSBatchUpdateRequest(entityName: "Author")
        update.propertiesToUpdate = ["searchName": "garbage"]
        let derived = #expect(throws: NSError.self) { try blog.context.execute(update) }
        #expect(derived?.code == NSManagedObjectValidationError)
        #expect(derived?.localizedDescription.contains("derived") == true, "\(derived?.localizedDescription ?? "")")
        #expect(try blog.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Author")).first?.value(forKey: "searchName") as? String == "ada")

        let stack = try BatchRequestEdgeTests.stack(kind)
        let abstract = #expect(throws: NSError.self) {
            try stack.context.execute(NSBatchInsertRequest(entityName: "Vehicle", objects: [["wheels": 2]]))
        }
        #expect(abstract?.localizedDescription.contains("abstract") == true, "\(abstract?.localizedDescription ?? "")")
        #expect(try stack.newContext().count(for: NSFetchRequest<NSFetchRequestResult>(entityName: "Vehicle")) == 0)
    }
}
