import Foundation
import Testing
@testable import CoreData

/// `NSBatchUpdateRequest` on both stores: constants and expressions, predicate and
/// sub-entities, `Z_OPT` bumped (optimistic locking holds), every result type, the row cache
/// not serving the rows as they were, and refused input writing nothing.
@Suite("Batch update requests")
struct BatchUpdateRequestTests {
    /// Five cars `c1`…`c5` with years 2001…2005 and prices 10…50.
    static func stackWithCars(inMemory: Bool) throws -> (TestStack, [NSManagedObjectID]) {
        let stack = try TestStack(inMemory: inMemory)
        let cars = (1...5).map { stack.insert("Car", ["name": "c\($0)", "year": 2000 + $0, "price": Double($0 * 10)]) }
        try stack.context.save()
        return (stack, cars.map(\.objectID))
    }

    static func values(_ stack: TestStack, _ key: String) throws -> [Any?] {
        let context = stack.newContext()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try context.fetch(request).map { $0.value(forKey: key) }
    }

    @Test("Constants and expressions, on the rows the predicate matches; every result type", arguments: [false, true])
    func constantsAndExpressions(inMemory: Bool) throws {
        let (stack, ids) = try Self.stackWithCars(inMemory: inMemory)
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
        if !inMemory {
            #expect(try stack.rows("SELECT Z_OPT FROM ZCAR ORDER BY Z_PK").map { $0[0] } == ["3", "2", "3", "3", "3"])
        }
    }

    @Test("includesSubentities chooses the rows of sub-entities", arguments: [false, true])
    func subentities(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
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

    @Test("Z_OPT goes up: an object read before the batch fails optimistic locking", arguments: [false, true])
    func optimisticLocking(inMemory: Bool) throws {
        let (stack, ids) = try Self.stackWithCars(inMemory: inMemory)
        let car = stack.context.object(with: ids[0])
        #expect(car.value(forKey: "name") as? String == "c1")
        let request = NSBatchUpdateRequest(entityName: "Car")
        request.propertiesToUpdate = ["price": 99.0]
        _ = try stack.context.execute(request)
        car.setValue("mine", forKey: "name")
        let error = try #require(throws: NSError.self) { try stack.context.save() }
        #expect(error.domain == NSCocoaErrorDomain && error.code == 133020)
    }

    @Test("The coordinator's row cache does not serve a row as it was before the batch")
    func rowCache() throws {
        let (stack, ids) = try Self.stackWithCars(inMemory: false)
        let key = IDKey(store: ids[0].persistentStore!.tag, root: ids[0].entity.layout.rootNumber, value: ids[0].primaryKey!)
        #expect(stack.coordinator.rowCache.contains(key)) // the save cached it
        let request = NSBatchUpdateRequest(entityName: "Car")
        request.propertiesToUpdate = ["price": 7.0]
        _ = try stack.context.execute(request)
        let other = stack.newContext()
        let fresh = other.object(with: ids[0])
        #expect(fresh.value(forKey: "price") as? Double == 7.0)
    }

    @Test("A predicate through a to-one relationship", arguments: [false, true])
    func predicateThroughARelationship(inMemory: Bool) throws {
        let (stack, ids) = try Self.stackWithCars(inMemory: inMemory)
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

    @Test("A value two rows would share under a uniqueness constraint: 133021, nothing written", arguments: [false, true])
    func uniquenessConstraint(inMemory: Bool) throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model, inMemory: inMemory)
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

    @Test("Refused: unknown key, relationship, wrong type, predicate on a missing key, unknown entity; nothing written", arguments: [false, true])
    func refusals(inMemory: Bool) throws {
        let (stack, _) = try Self.stackWithCars(inMemory: inMemory)
        func refusal(entity: String = "Car", _ properties: [AnyHashable: Any], _ predicate: NSPredicate? = nil) -> NSError? {
            let request = NSBatchUpdateRequest(entityName: entity)
            request.propertiesToUpdate = properties
            request.predicate = predicate
            do {
                _ = try stack.context.execute(request)
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
        #expect(try Self.values(stack, "price").map { $0 as? Double } == [10, 20, 30, 40, 50])
        if !inMemory {
            #expect(try stack.rows("SELECT DISTINCT Z_OPT FROM ZCAR") == [["1"]])
        }
    }

    /// A computed double stored in an integer attribute is truncated toward zero, and in a
    /// decimal attribute keeps its shortest exact digits, on every store (PostgreSQL rounded
    /// 7.5 to 8, and kept 15 digits of a double made a decimal).
    @Test(arguments: TestStoreKind.available.map(Optional.some) + [nil])
    func computedDoublesAreStoredAlikeEverywhere(_ kind: TestStoreKind?) throws {
        let stack = try kind.map { try TestStack($0) } ?? TestStack(inMemory: true)
        stack.insert("Car", ["name": "a", "price": 5.0])
        stack.insert("Car", ["name": "b", "price": 1234567.8901234567 / 1.5])
        try stack.context.save()
        let request = NSBatchUpdateRequest(entityName: "Car")
        request.propertiesToUpdate = ["year": NSExpression(format: "price * 1.5"), "cost": NSExpression(format: "price * 1.5")]
        _ = try stack.context.execute(request)
        let cars = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).sorted { ($0.value(forKey: "name") as! String) < ($1.value(forKey: "name") as! String) }
        #expect(cars.first?.value(forKey: "year") as? Int == 7)
        let expected = Decimal(string: "\(1234567.8901234567 / 1.5 * 1.5)")!
        #expect((cars.last?.value(forKey: "cost") as? NSDecimalNumber)?.decimalValue == expected)
    }

    @Test("A new value read through a relationship is refused by every store alike (1550), nothing written", arguments: [false, true])
    func aValueThroughARelationshipIsRefused(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        let ada = stack.insert("Person", ["name": "Ada"])
        stack.insert("Car", ["name": "T", "owner": ada])
        try stack.context.save()
        let request = NSBatchUpdateRequest(entityName: "Car")
        request.propertiesToUpdate = ["name": NSExpression(forKeyPath: "owner.name")]
        let error = #expect(throws: NSError.self) { try stack.context.execute(request) }
        #expect(error?.code == NSValidationMultipleErrorsError || error?.code == 1550)
        #expect(try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first?.value(forKey: "name") as? String == "T")
        // A condition reading through one is refused too.
        let ternary = NSBatchUpdateRequest(entityName: "Car")
        ternary.propertiesToUpdate = ["name": NSExpression(format: "TERNARY(owner.name == 'Ada', 'a', 'b')")]
        #expect(throws: NSError.self) { try stack.context.execute(ternary) }
        // A to-many's count is a subquery every store computes.
        let count = NSBatchUpdateRequest(entityName: "Person")
        count.propertiesToUpdate = ["age": NSExpression(format: "cars.@count")]
        _ = try stack.context.execute(count)
        #expect(try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first?.value(forKey: "age") as? Int == 1)
    }

    @Test("A batch insert's transient key is named as transient")
    func aTransientKeyIsNamed() throws {
        let stack = try TestStack()
        let error = #expect(throws: NSError.self) {
            try stack.context.execute(NSBatchInsertRequest(entityName: "Car", objects: [["name": "c", "scratch": "x"]]))
        }
        #expect(error?.localizedDescription.contains("transient") == true)
    }
}
