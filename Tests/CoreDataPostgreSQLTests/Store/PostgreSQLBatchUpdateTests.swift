import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// `NSBatchUpdateRequest` on the PostgreSQL store: the SQLite store's cases and expectations
/// (`BatchUpdateRequestTests`).
@Suite("PostgreSQL batch update requests", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLBatchUpdateTests {
    /// Five cars `c1`…`c5` with years 2001…2005 and prices 10…50.
    static func stackWithCars() throws -> (PostgreSQLBatchStack, [NSManagedObjectID]) {
        let stack = try PostgreSQLBatchStack()
        let cars = (1...5).map { stack.insert("Car", ["name": "c\($0)", "year": 2000 + $0, "price": Double($0 * 10)]) }
        try stack.context.save()
        return (stack, cars.map(\.objectID))
    }

    static func values(_ stack: PostgreSQLBatchStack, _ key: String) throws -> [Any?] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try stack.newContext().fetch(request).map { $0.value(forKey: key) }
    }

    @Test("Constants and expressions, on the rows the predicate matches; every result type")
    func constantsAndExpressions() throws {
        let (stack, ids) = try Self.stackWithCars()
        let request = NSBatchUpdateRequest(entityName: "Car")
        request.predicate = NSPredicate(format: "year >= %d", 2003)
        request.propertiesToUpdate = ["electric": true, "year": NSExpression(format: "year + 10"),
                                      "price": NSExpression(format: "price * 2"), "name": NSExpression(forConstantValue: "x")]
        request.resultType = .updatedObjectIDsResultType
        let result = try #require(try stack.context.execute(request) as? NSBatchUpdateResult)
        #expect(result.resultType == .updatedObjectIDsResultType)
        #expect(Set(try #require(result.result as? [NSManagedObjectID])) == Set(ids[2...]))
        #expect(try Self.values(stack, "year").map { $0 as? Int } == [2001, 2002, 2013, 2014, 2015])
        #expect(try Self.values(stack, "price").map { $0 as? Double } == [10, 20, 60, 80, 100])
        #expect(try Self.values(stack, "electric").map { $0 as? Bool } == [false, false, true, true, true])

        let counted = NSBatchUpdateRequest(entity: stack.model.entitiesByName["Car"]!)
        counted.propertiesToUpdate = [stack.model.entitiesByName["Car"]!.attributesByName["price"]!: 1.5]
        counted.resultType = .updatedObjectsCountResultType
        #expect((try stack.context.execute(counted) as? NSBatchUpdateResult)?.result as? Int == 5)
        let status = NSBatchUpdateRequest(entityName: "Car")
        status.propertiesToUpdate = ["name": NSNull()]
        status.predicate = NSPredicate(format: "name == %@", "c1")
        #expect((try stack.context.execute(status) as? NSBatchUpdateResult)?.result as? Bool == true)
        #expect(try Self.values(stack, "price").allSatisfy { $0 as? Double == 1.5 })
        #expect(try stack.rows("SELECT \"Z_OPT\" FROM \"ZCAR\" ORDER BY \"Z_PK\"").map { $0[0] } == ["3", "2", "3", "3", "3"])
        #expect(try stack.rows("SELECT \"ZNAME\" FROM \"ZCAR\" ORDER BY \"Z_PK\"").map { $0[0] } == ["NULL", "c2", "x", "x", "x"])
    }

    @Test("includesSubentities chooses the rows of sub-entities")
    func subentities() throws {
        let stack = try PostgreSQLBatchStack()
        stack.insert("Truck", ["wheels": 6])
        stack.insert("Bike", ["wheels": 2])
        try stack.context.save()
        let own = NSBatchUpdateRequest(entityName: "Truck")
        own.propertiesToUpdate = ["wheels": NSExpression(format: "wheels + 1")]
        own.resultType = .updatedObjectsCountResultType
        #expect((try stack.context.execute(own) as? NSBatchUpdateResult)?.result as? Int == 1)
        let none = NSBatchUpdateRequest(entityName: "Vehicle")
        none.includesSubentities = false
        none.propertiesToUpdate = ["wheels": 0]
        none.resultType = .updatedObjectsCountResultType
        #expect((try stack.context.execute(none) as? NSBatchUpdateResult)?.result as? Int == 0)
        let all = NSBatchUpdateRequest(entityName: "Vehicle")
        all.propertiesToUpdate = ["wheels": NSExpression(format: "wheels * 10")]
        all.resultType = .updatedObjectIDsResultType
        let ids = try #require((try stack.context.execute(all) as? NSBatchUpdateResult)?.result as? [NSManagedObjectID])
        #expect(Set(ids.map { $0.entity.name! }) == ["Truck", "Bike"])
        let wheels = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Vehicle")).map { $0.value(forKey: "wheels") as? Int }
        #expect(Set(wheels) == [70, 20])
    }

    @Test("Z_OPT goes up: an object read before the batch fails optimistic locking")
    func optimisticLocking() throws {
        let (stack, ids) = try Self.stackWithCars()
        let car = stack.context.object(with: ids[0])
        #expect(car.value(forKey: "name") as? String == "c1")
        let request = NSBatchUpdateRequest(entityName: "Car")
        request.propertiesToUpdate = ["price": 99.0]
        _ = try stack.context.execute(request)
        car.setValue("mine", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.domain == NSCocoaErrorDomain && error.code == 133020)
    }

    @Test("A predicate through a to-one relationship")
    func predicateThroughARelationship() throws {
        let (stack, ids) = try Self.stackWithCars()
        let owner = stack.insert("Person", ["name": "p"])
        stack.context.object(with: ids[1]).setValue(owner, forKey: "owner")
        stack.context.object(with: ids[3]).setValue(owner, forKey: "owner")
        try stack.context.save()
        let request = NSBatchUpdateRequest(entityName: "Car")
        request.predicate = NSPredicate(format: "owner.name == %@", "p")
        request.propertiesToUpdate = ["price": NSExpression(format: "price + year")]
        request.resultType = .updatedObjectsCountResultType
        #expect((try stack.context.execute(request) as? NSBatchUpdateResult)?.result as? Int == 2)
        #expect(try Self.values(stack, "price").map { $0 as? Double } == [10, 2022, 30, 2044, 50])
    }

    @Test("A value two rows would share under a uniqueness constraint: 133021, nothing written")
    func uniquenessConstraint() throws {
        let stack = try PostgreSQLBatchStack(model: PostgreSQLBatchModel.constrained())
        stack.insert("Tag", ["label": "a"])
        stack.insert("Tag", ["label": "b"])
        try stack.context.save()
        let request = NSBatchUpdateRequest(entityName: "Tag")
        request.propertiesToUpdate = ["label": "same"]
        let error = try #require(throws: NSError.self) { try stack.context.execute(request) }
        #expect(error.domain == NSCocoaErrorDomain && error.code == 133021)
        let labels = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Tag")).compactMap { $0.value(forKey: "label") as? String }
        #expect(labels.sorted() == ["a", "b"])
        request.predicate = NSPredicate(format: "label == %@", "a")
        #expect((try stack.context.execute(request) as? NSBatchUpdateResult)?.result as? Bool == true)
    }

    @Test("Refused: unknown key, relationship, wrong type, predicate on a missing key, unknown entity, read-only; nothing written")
    func refusals() throws {
        let (stack, _) = try Self.stackWithCars()
        func refusal(entity: String = "Car", _ properties: [AnyHashable: Any], _ predicate: NSPredicate? = nil,
                     in context: NSManagedObjectContext? = nil) -> NSError? {
            let request = NSBatchUpdateRequest(entityName: entity)
            request.propertiesToUpdate = properties
            request.predicate = predicate
            do {
                _ = try (context ?? stack.context).execute(request)
                return nil
            } catch {
                return error as NSError
            }
        }
        let unknown = try #require(refusal(["price": 1.0, "colour": "red"]))
        #expect(unknown.domain == NSCocoaErrorDomain && unknown.code == 1550 && unknown.userInfo[NSValidationKeyErrorKey] as? String == "colour")
        let relationship = try #require(refusal(["owner": NSNull()]))
        #expect(relationship.code == 1550 && relationship.localizedDescription.contains("owner"))
        let wrongType = try #require(refusal(["price": 1.0, "year": "soon"]))
        #expect(wrongType.code == 1550 && wrongType.userInfo[NSValidationKeyErrorKey] as? String == "year")
        let predicate = try #require(refusal(["price": 1.0], NSPredicate(format: "colour == %@", "red")))
        #expect(predicate.domain == NSCocoaErrorDomain && predicate.localizedDescription.contains("colour"))
        let expression = try #require(refusal(["price": NSExpression(format: "weight * 2")]))
        #expect(expression.domain == NSCocoaErrorDomain && expression.localizedDescription.contains("weight"))
        let entity = try #require(refusal(entity: "Boat", ["price": 1.0]))
        #expect(entity.code == 134060)
        let readOnly = try #require(refusal(["price": 1.0], in: try stack.readOnlyContext()))
        #expect(readOnly.domain == NSCocoaErrorDomain && readOnly.code == 134030)
        #expect(try Self.values(stack, "price").map { $0 as? Double } == [10, 20, 30, 40, 50])
        #expect(try stack.rows("SELECT DISTINCT \"Z_OPT\" FROM \"ZCAR\"") == [["1"]])
    }
}
