import Foundation
import Testing
@testable import CoreData

/// `NSBatchInsertRequest` on both stores: every form and result type, keys in the order
/// given, defaults, upserts under uniqueness constraints, and Apple's validation (nothing
/// written when a row is refused).
@Suite("Batch insert requests")
struct BatchInsertRequestTests {
    /// ``TestModel`` with a uniqueness constraint on `Tag.label`.
    static func constrainedModel() -> NSManagedObjectModel {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        return model
    }

    static func cars(_ stack: TestStack) throws -> [[String: Any]] {
        let request = NSFetchRequest<NSDictionary>(entityName: "Car")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "year", "electric", "price"]
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try stack.context.fetch(request).map { $0 as! [String: Any] }
    }

    @Test("objects: rows in the order given, defaults applied, every result type", arguments: [false, true])
    func objectsForm(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        let request = NSBatchInsertRequest(entityName: "Car", objects: [["name": "c", "price": 3.5], ["name": "a", "year": 1999], ["name": "b"]])
        request.resultType = .objectIDs
        let result = try #require(try stack.context.execute(request) as? NSBatchInsertResult)
        #expect(result.resultType == .objectIDs)
        let ids = try #require(result.result as? [NSManagedObjectID])
        #expect(ids.map { $0.primaryKey! } == [1, 2, 3])
        #expect(ids.allSatisfy { $0.entity.name == "Car" && !$0.isTemporaryID })
        #expect(ids.map { stack.context.object(with: $0).value(forKey: "name") as? String } == ["c", "a", "b"])
        let rows = try Self.cars(stack)
        #expect(rows.map { $0["year"] as? Int } == [1999, 2000, 2000]) // the default where none was given
        #expect(rows.map { $0["electric"] as? Bool } == [false, false, false])
        #expect(rows[2]["price"] as? Double == 3.5)

        let counted = NSBatchInsertRequest(entityName: "Car", objects: [["name": "d"], ["name": "e"]])
        counted.resultType = .count
        #expect((try stack.context.execute(counted) as? NSBatchInsertResult)?.result as? Int == 2)
        let status = NSBatchInsertRequest(entity: stack.model.entitiesByName["Car"]!, objects: [["name": "f"]])
        #expect((try stack.context.execute(status) as? NSBatchInsertResult)?.result as? Bool == true)
        // A save after the batch gets the next key.
        let car = stack.insert("Car", ["name": "g"])
        try stack.context.save()
        #expect(car.objectID.primaryKey == 7)
        if !inMemory {
            #expect(try stack.rows("SELECT Z_PK, Z_ENT, Z_OPT, ZNAME FROM ZCAR ORDER BY Z_PK").map { $0[0] + $0[2] + $0[3] }
                    == ["11c", "21a", "31b", "41d", "51e", "61f", "71g"])
            #expect(try stack.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car'") == [["7"]])
        }
    }

    @Test("Dictionary and managed-object handlers: called until they return true", arguments: [false, true])
    func handlerForms(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        var count = 0
        let byDictionary = NSBatchInsertRequest(entityName: "Person") { dictionary in
            guard count < 3 else { return true }
            count += 1
            dictionary["name"] = "p\(count)"
            dictionary["age"] = count * 10
            return false
        }
        byDictionary.resultType = .count
        #expect((try stack.context.execute(byDictionary) as? NSBatchInsertResult)?.result as? Int == 3)
        var made = 0
        let byObject = NSBatchInsertRequest(entity: stack.model.entitiesByName["Person"]!) { (object: NSManagedObject) in
            guard made < 2 else { return true }
            made += 1
            object.setValue("q\(made)", forKey: "name")
            return false
        }
        byObject.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(byObject) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.map { $0.primaryKey! } == [4, 5])
        let people = try stack.fetch("Person") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(people.map { $0.value(forKey: "name") as? String } == ["p1", "p2", "p3", "q1", "q2"])
        #expect(people.map { $0.value(forKey: "age") as? Int } == [10, 20, 30, 0, 0])
        #expect(stack.context.registeredObjects.count == 5) // only the fetch's: the batch made none here
        // The two other forms: an entity with a dictionary handler, a name with an object handler.
        var rest = ["r1", "r2"]
        let byEntity = NSBatchInsertRequest(entity: stack.model.entitiesByName["Person"]!) { (dictionary: NSMutableDictionary) in
            guard let name = rest.popLast() else { return true }
            dictionary["name"] = name
            return false
        }
        #expect((try stack.context.execute(byEntity) as? NSBatchInsertResult)?.result as? Bool == true)
        let byName = NSBatchInsertRequest(entityName: "Person") { (object: NSManagedObject) in
            guard let name = rest.isEmpty ? "s1" : nil else { return true }
            rest = ["done"]
            object.setValue(name, forKey: "name")
            return false
        }
        #expect((try stack.context.execute(byName) as? NSBatchInsertResult)?.result as? Bool == true)
        let names = try stack.fetch("Person") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(names.map { $0.value(forKey: "name") as? String } == ["p1", "p2", "p3", "q1", "q2", "r1", "r2", "s1"])
    }

    @Test("The managed-object handler gets an object of the entity's class, in no context")
    func handlerObjectsHaveTheEntitysClass() throws {
        let stack = try TestStack(classes: ["Car": BatchInsertedCar.self])
        var classes: [String] = []
        let request = NSBatchInsertRequest(entityName: "Car") { (object: NSManagedObject) in
            guard classes.isEmpty else { return true }
            classes.append("\(type(of: object))")
            #expect(object.managedObjectContext == nil)
            object.setValue("a", forKey: "name")
            return false
        }
        _ = try stack.context.execute(request)
        #expect(classes == ["BatchInsertedCar"])
        #expect(try stack.fetch("Car").map { $0.value(forKey: "name") as? String } == ["a"])
    }

    @Test("Uniqueness constraints make it an upsert: the stored row updated, its key kept", arguments: [false, true])
    func upsert(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.constrainedModel(), inMemory: inMemory)
        let existing = stack.insert("Tag", ["label": "b"])
        try stack.context.save()
        let request = NSBatchInsertRequest(entityName: "Tag", objects: [["label": "a"], ["label": "b"], ["label": "c"], ["label": "a"]])
        request.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.map { $0.primaryKey! } == [2, 1, 3, 2])
        #expect(ids[1] == existing.objectID)
        #expect(try stack.fetch("Tag").count == 3)
        let counted = NSBatchInsertRequest(entityName: "Tag", objects: [["label": "c"], ["label": "d"]])
        counted.resultType = .count
        #expect((try stack.context.execute(counted) as? NSBatchInsertResult)?.result as? Int == 2)
        if !inMemory {
            #expect(try stack.rows("SELECT Z_PK, Z_OPT, ZLABEL FROM ZTAG ORDER BY Z_PK") == [["1", "2", "b"], ["2", "2", "a"], ["3", "2", "c"], ["4", "1", "d"]])
            #expect(try stack.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'") == [["4"]])
        }
        // The context's object from before fails optimistic locking, as after another context's save.
        existing.setValue("z", forKey: "label")
        #expect(throws: NSError.self) { try stack.context.save() }
    }

    @Test("An upsert leaves the stored row's constrained values as they were, in every store (another constraint's value is not taken)", arguments: [false, true])
    func anUpsertKeepsConstrainedValues(inMemory: Bool) throws {
        let model = TestModel.make()
        model.entitiesByName["Person"]!.uniquenessConstraints = [["name"], ["age"]]
        let stack = try TestStack(model: model, inMemory: inMemory)
        stack.insert("Person", ["name": "a", "age": 1])
        stack.insert("Person", ["name": "b", "age": 2])
        try stack.context.save()
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Person", objects: [["name": "a", "age": 2]]))
        _ = try stack.context.execute(NSBatchInsertRequest(entityName: "Person", objects: [["name": "a", "age": 5]]))
        let people = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            .map { "\($0.value(forKey: "name") as? String ?? "?")\($0.value(forKey: "age") as? Int ?? -1)" }.sorted()
        #expect(people == ["a1", "b2"])
    }

    @Test("An upsert's updated row is not served from the coordinator's row cache as it was")
    func upsertAndTheRowCache() throws {
        let model = TestModel.make()
        model.entitiesByName["Person"]!.uniquenessConstraints = [["name"]]
        let stack = try TestStack(model: model)
        let person = stack.insert("Person", ["name": "p", "age": 1])
        try stack.context.save()
        let request = NSBatchInsertRequest(entityName: "Person", objects: [["name": "p", "age": 5]])
        _ = try stack.context.execute(request)
        let other = stack.newContext()
        #expect(other.object(with: person.objectID).value(forKey: "age") as? Int == 5)
    }

    @Test("The dictionary handler's dictionary behaves as one: any key order, NSString keys, reads, removals, overwrites", arguments: [false, true])
    func handlerDictionary(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        var row = 0
        var seen: [String] = []
        let request = NSBatchInsertRequest(entityName: "Person") { dictionary in
            row += 1
            switch row {
            case 1: // the usual order, then read back
                dictionary["name"] = "a"
                dictionary["age"] = 1
                seen.append("\(dictionary.count) \(dictionary["name"] ?? "-") \(dictionary["age"] ?? "-")")
            case 2: // another order, an NSString key, an overwrite, a removal
                dictionary["age"] = 2
                dictionary[NSString(string: "name")] = "x"
                dictionary["name"] = "b"
                dictionary["age"] = nil
                seen.append("\(dictionary.count) \(dictionary.allKeys.map { "\($0)" }.sorted())")
            case 3: // the previous row's values are gone
                seen.append("\(dictionary.count) \(dictionary["name"] == nil)")
                dictionary.setObject("c", forKey: "name" as NSString)
            default:
                return true
            }
            return false
        }
        #expect((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? Bool == true)
        #expect(seen == ["2 a 1", "1 [\"name\"]", "0 true"])
        let people = try stack.fetch("Person") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(people.map { "\($0.value(forKey: "name") ?? "-") \($0.value(forKey: "age") ?? "-")" } == ["a 1", "b 0", "c 0"])

        // A key that is no attribute, set by the handler, refuses the row by name; nothing is written.
        var calls = 0
        let unknown = NSBatchInsertRequest(entityName: "Person") { dictionary in
            calls += 1
            guard calls <= 2 else { return true }
            dictionary["name"] = "d"
            if calls == 2 { dictionary["colour"] = "red" }
            return false
        }
        let error = try #require(throws: NSError.self) { try stack.context.execute(unknown) }
        #expect(error.code == 1550 && error.userInfo[NSValidationKeyErrorKey] as? String == "colour")
        #expect(error.localizedDescription.contains("row 1"))
        #expect(try stack.fetch("Person").count == 3)
    }

    @Test("Refused rows: missing, wrong type, unknown key, relationship, unknown entity; nothing written", arguments: [false, true])
    func validation(inMemory: Bool) throws {
        let stack = try TestStack(inMemory: inMemory)
        func refusal(_ entity: String, _ rows: [[String: Any]]) -> NSError? {
            do {
                _ = try stack.context.execute(NSBatchInsertRequest(entityName: entity, objects: rows))
                return nil
            } catch {
                return error as NSError
            }
        }
        let missing = try #require(refusal("Person", [["name": "a"], ["age": 3]]))
        #expect(missing.domain == NSCocoaErrorDomain && missing.code == 1570)
        #expect(missing.userInfo[NSValidationKeyErrorKey] as? String == "name")
        #expect(missing.localizedDescription.contains("row 1") && missing.localizedDescription.contains("name"))
        let wrongType = try #require(refusal("Car", [["name": "a"], ["name": "b"], ["year": "soon"]]))
        #expect(wrongType.code == 1550 && wrongType.userInfo[NSValidationKeyErrorKey] as? String == "year")
        #expect(wrongType.localizedDescription.contains("row 2"))
        let unknown = try #require(refusal("Car", [["name": "a", "colour": "red"]]))
        #expect(unknown.code == 1550 && unknown.userInfo[NSValidationKeyErrorKey] as? String == "colour")
        let relationship = try #require(refusal("Car", [["name": "a", "owner": NSNull()]]))
        #expect(relationship.code == 1550 && relationship.localizedDescription.contains("relationship"))
        let entity = try #require(refusal("Boat", [["name": "a"]]))
        #expect(entity.domain == NSCocoaErrorDomain && entity.code == 134060 && entity.localizedDescription.contains("Boat"))
        #expect(try stack.fetch("Person").isEmpty && stack.fetch("Car").isEmpty)
        if !inMemory {
            #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["0"]])
            #expect(try stack.rows("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car'") == [["0"]])
        }
    }

    @Test("A batch insert into a read-only store throws, nothing written")
    func readOnly() throws {
        let stack = try TestStack()
        let readOnly = NSPersistentStoreCoordinator(managedObjectModel: stack.model)
        try readOnly.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: stack.url, options: [NSReadOnlyPersistentStoreOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = readOnly
        #expect(throws: NSError.self) { try context.execute(NSBatchInsertRequest(entityName: "Car", objects: [["name": "a"]])) }
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["0"]])
    }
}

/// A class of the `Car` entity, for the managed-object handler.
final class BatchInsertedCar: NSManagedObject {}
