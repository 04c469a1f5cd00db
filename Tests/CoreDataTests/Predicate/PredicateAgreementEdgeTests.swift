import Foundation
import Testing
@testable import CoreData

/// Predicates that the stores' SQL and the evaluation in memory answered differently: decimals
/// with a fraction, collection operators past a nil to-one, an optional to-one between two
/// to-many steps, objects of another store.
@Suite("Predicates agree at their edges")
struct PredicateAgreementEdgeTests {
    /// What each place answers for `predicate` over `entity`'s objects: each store's fetch (its
    /// objects' `key` values, sorted), and the in-memory evaluation of the first stack's objects.
    static func answers(_ stacks: [TestStack], _ entity: String, _ predicate: NSPredicate, key: String = "name") throws -> [[String]] {
        var answers: [[String]] = []
        for stack in stacks {
            let context = stack.newContext()
            let request = NSFetchRequest<NSManagedObject>(entityName: entity)
            request.predicate = predicate
            answers.append(try context.fetch(request).map { $0.value(forKey: key) as? String ?? "" }.sorted())
        }
        let context = stacks[0].newContext() // (kept: objects do not keep their context)
        let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
        answers.append(all.filter { predicate.evaluate(with: $0) }.map { $0.value(forKey: key) as? String ?? "" }.sorted())
        return withExtendedLifetime(context) { answers }
    }

    static func stacks(model: @escaping () -> NSManagedObjectModel = { TestModel.make() }, _ fill: (TestStack) throws -> Void) throws -> [TestStack] {
        var stacks = [try TestStack(model: model(), inMemory: true)]
        for kind in TestStoreKind.available { stacks.append(try TestStack(kind, model: model())) }
        for stack in stacks { try fill(stack); try stack.context.save() }
        return stacks
    }

    @Test("A decimal with a fraction compares as the stores compare it (19.99 is the double 19.99)")
    func decimalsWithAFraction() throws {
        let stacks = try Self.stacks { stack in
            for (name, cost) in [("a", "19.99"), ("b", "0.07"), ("c", "49.99"), ("d", "20")] {
                stack.insert("Car", ["name": name, "cost": Decimal(string: cost)!])
            }
        }
        for (format, arguments, expected) in [("cost == 19.99", [], ["a"]), ("cost == %@", [Decimal(string: "19.99")!], ["a"]),
                                              ("cost <= 19.99", [], ["a", "b"]), ("cost == 0.07 OR cost == 49.99", [], ["b", "c"]),
                                              ("cost BETWEEN {0.07, 19.99}", [], ["a", "b"])] as [(String, [Any], [String])] {
            let answers = try Self.answers(stacks, "Car", NSPredicate(format: format, argumentArray: arguments))
            #expect(answers.allSatisfy { $0 == expected }, "\(format): \(answers)")
        }
        // The bounds of validation compare the same way.
        let car = stacks[0].insert("Car", ["name": "e", "cost": Decimal(string: "19.99")!])
        #expect(car.value(forKey: "cost") as? Decimal == Decimal(string: "19.99"))
    }

    @Test("@count and @sum past a nil to-one read an empty collection, in every store and in memory")
    func collectionOperatorsPastANilToOne() throws {
        let stacks = try Self.stacks { stack in
            let ada = stack.insert("Person", ["name": "Ada"])
            stack.insert("Car", ["name": "owned1", "owner": ada, "year": 2001])
            stack.insert("Car", ["name": "owned2", "owner": ada, "year": 2002])
            stack.insert("Car", ["name": "unowned"])
        }
        for (format, expected) in [("owner.cars.@count == 0", ["unowned"]), ("owner.cars.@count == 2", ["owned1", "owned2"]),
                                   ("owner.cars.@sum.year == 4003", ["owned1", "owned2"]), ("owner.cars.@count < 1", ["unowned"])] {
            let answers = try Self.answers(stacks, "Car", NSPredicate(format: format))
            #expect(answers.allSatisfy { $0 == expected }, "\(format): \(answers)")
        }
    }

    /// Customer -orders->> Order -shipment-> Shipment -items->> Item(sku): an optional to-one
    /// between two to-many steps.
    static func shopModel() -> NSManagedObjectModel {
        func entity(_ name: String) -> NSEntityDescription { let e = NSEntityDescription(); e.name = name; return e }
        let (customer, order, shipment, item) = (entity("Customer"), entity("Order"), entity("Shipment"), entity("Item"))
        func link(_ name: String, _ from: NSEntityDescription, _ to: NSEntityDescription, toMany: Bool) -> NSRelationshipDescription {
            let r = NSRelationshipDescription(); r.name = name; r.destinationEntity = to; r.maxCount = toMany ? 0 : 1; r.isOptional = true
            return r
        }
        let orders = link("orders", customer, order, toMany: true), buyer = link("customer", order, customer, toMany: false)
        orders.inverseRelationship = buyer; buyer.inverseRelationship = orders
        let ships = link("shipment", order, shipment, toMany: false), shipped = link("order", shipment, order, toMany: false)
        ships.inverseRelationship = shipped; shipped.inverseRelationship = ships
        let items = link("items", shipment, item, toMany: true), box = link("shipment", item, shipment, toMany: false)
        items.inverseRelationship = box; box.inverseRelationship = items
        customer.properties = [attribute("name", .stringAttributeType), orders]
        order.properties = [attribute("name", .stringAttributeType), buyer, ships]
        shipment.properties = [shipped, items]
        item.properties = [attribute("sku", .stringAttributeType), box]
        let model = NSManagedObjectModel()
        model.entities = [customer, order, shipment, item]
        return model
    }

    @Test("A to-many past a nil to-one past a to-many holds no element, in every store and in memory")
    func aNilToOneBetweenToManySteps() throws {
        let stacks = try Self.stacks(model: Self.shopModel) { stack in
            let waiting = stack.insert("Customer", ["name": "waiting"])
            stack.insert("Order", ["name": "o1", "customer": waiting]) // no shipment yet
            let shipped = stack.insert("Customer", ["name": "shipped"])
            let order = stack.insert("Order", ["name": "o2", "customer": shipped])
            let box = stack.insert("Shipment", ["order": order])
            stack.insert("Item", ["sku": "x", "shipment": box])
        }
        for (format, expected) in [("ANY orders.shipment.items.sku != 'y'", ["shipped"]), ("ANY orders.shipment.items.sku == 'x'", ["shipped"]),
                                   ("ALL orders.shipment.items.sku == 'x'", ["shipped", "waiting"]),
                                   ("NONE orders.shipment.items.sku == 'x'", ["waiting"])] {
            let answers = try Self.answers(stacks, "Customer", NSPredicate(format: format))
            #expect(answers.allSatisfy { $0 == expected }, "\(format): \(answers)")
        }
    }

    @Test("An object of another store matches none of a store's rows, though its key is one of theirs")
    func objectsOfAnotherStore() throws {
        let stack = try TestStack()
        let second = try stack.coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                                              at: stack.directory.appendingPathComponent("Second.sqlite"))
        let first = stack.insert("Car", ["name": "first"])
        let other = stack.insert("Car", ["name": "second"])
        stack.context.assign(other, to: second)
        try stack.context.save()
        #expect(first.objectID.primaryKey == other.objectID.primaryKey)
        for predicate in [NSPredicate(format: "SELF == %@", other), NSPredicate(format: "SELF IN %@", [other.objectID])] {
            let found = try stack.newContext().fetch({ let r = NSFetchRequest<NSManagedObject>(entityName: "Car"); r.predicate = predicate; return r }())
            #expect(found.map(\.objectID) == [other.objectID], "\(predicate)")
            #expect(predicate.evaluate(with: other) && !predicate.evaluate(with: first))
        }
    }
}
