import Foundation
import Testing
@testable import CoreData

/// Batch requests at their edges: a constant `nil` in a batch update, a batch delete limited by
/// its fetch request, an upsert that meets a row of another entity of the family.
@Suite("Batch requests: edges")
struct BatchRequestEdgeTests {
    static func stack(_ kind: TestStoreKind?, model: NSManagedObjectModel = TestModel.make()) throws -> TestStack {
        guard let kind else { return try TestStack(model: model, inMemory: true) }
        return try TestStack(kind, model: model)
    }

    static let kinds: [TestStoreKind?] = [nil] + TestStoreKind.available

    @Test("A batch update to NSExpression(forConstantValue: nil) clears the attribute", arguments: kinds)
    func aConstantNilClears(_ kind: TestStoreKind?) throws {
        let stack = try Self.stack(kind)
        stack.insert("Car", ["name": "Beetle", "year": 1970, "extras": ["sunroof"]])
        try stack.context.save()
        let request = NSBatchUpdateRequest(entityName: "Car")
        request.propertiesToUpdate = ["name": NSExpression(forConstantValue: nil), "extras": NSExpression(forConstantValue: nil)]
        request.resultType = .updatedObjectsCountResultType
        #expect((try stack.context.execute(request) as? NSBatchUpdateResult)?.result as? Int == 1)
        let car = try #require(try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first)
        #expect(car.value(forKey: "name") == nil)
        #expect(car.value(forKey: "extras") == nil)
        #expect(car.value(forKey: "year") as? Int == 1970)
    }

    @Test("A batch delete deletes only the rows its fetch request returns: sort, limit, offset", arguments: kinds)
    func aBatchDeleteHonoursTheFetchLimitAndOffset(_ kind: TestStoreKind?) throws {
        let stack = try Self.stack(kind)
        for year in 2001...2006 { stack.insert("Car", ["name": "c\(year)", "year": year]) }
        try stack.context.save()
        func years() throws -> [Int] {
            try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).compactMap { $0.value(forKey: "year") as? Int }.sorted()
        }
        // The newest two.
        let newest = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
        newest.sortDescriptors = [NSSortDescriptor(key: "year", ascending: false)]
        newest.fetchLimit = 2
        let delete = NSBatchDeleteRequest(fetchRequest: newest)
        delete.resultType = .resultTypeObjectIDs
        let ids = try #require((try stack.context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        #expect(ids.count == 2)
        #expect(try years() == [2001, 2002, 2003, 2004])
        // All but the oldest one, among those after 2001.
        let rest = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
        rest.predicate = NSPredicate(format: "year > 2001")
        rest.sortDescriptors = [NSSortDescriptor(key: "year", ascending: true)]
        rest.fetchOffset = 1
        let count = NSBatchDeleteRequest(fetchRequest: rest)
        count.resultType = .resultTypeCount
        #expect((try stack.context.execute(count) as? NSBatchDeleteResult)?.result as? Int == 2)
        #expect(try years() == [2001, 2002])
    }

    @Test("An upsert that updates a row of another entity of the family returns that row's ID and keeps its values", arguments: kinds)
    func anUpsertOfASiblingsRow(_ kind: TestStoreKind?) throws {
        let model = TestModel.make()
        model.entitiesByName["Vehicle"]!.uniquenessConstraints = [["wheels"]]
        let stack = try Self.stack(kind, model: model)
        let truck = stack.insert("Truck", ["wheels": 6, "load": 1.5])
        try stack.context.save()
        let request = NSBatchInsertRequest(entityName: "Bike", objects: [["wheels": 6, "load": 3], ["wheels": 2, "load": 1]])
        request.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.map { $0.entity.name } == ["Truck", "Bike"])
        #expect(ids[0] == truck.objectID)
        let reread = try stack.newContext().existingObject(with: truck.objectID)
        #expect(reread.entity.name == "Truck")
        #expect(reread.value(forKey: "load") as? Double == 1.5)
    }

    @Test("A limited batch delete that names its stores counts only their rows")
    func aLimitedBatchDeleteOfOneStore() throws {
        let stack = try TestStack()
        let second = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                                              at: stack.directory.appendingPathComponent("Second.sqlite"))
        stack.insert("Car", ["name": "a", "year": 2001])
        let other = stack.insert("Car", ["name": "b", "year": 2002])
        stack.context.assign(other, to: second)
        try stack.context.save()
        let oldest = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
        oldest.sortDescriptors = [NSSortDescriptor(key: "year", ascending: true)]
        oldest.fetchLimit = 1
        let delete = NSBatchDeleteRequest(fetchRequest: oldest)
        delete.affectedStores = [second]
        delete.resultType = .resultTypeObjectIDs
        let ids = try #require((try stack.context.execute(delete) as? NSBatchDeleteResult)?.result as? [NSManagedObjectID])
        #expect(ids == [other.objectID])
    }
}
