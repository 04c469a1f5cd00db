import Foundation
import Observation
import Testing
@testable import CoreData
import TestSupport

/// Composite attributes (`NSCompositeAttributeDescription`): a dictionary of elements in memory,
/// a column per leaf element in the store, elements reached by key path in fetches.
@Suite("Composite attributes")
struct CompositeAttributeTests {
    /// `Person` with `name` and a composite `address` (street, city, zip: Integer 32, and a nested
    /// composite `geo` of latitude and longitude), and a plain `city` attribute whose column
    /// collides with the element's.
    static func model(addressOptional: Bool = true, cityRequired: Bool = false) -> NSManagedObjectModel {
        let street = attribute("street", .stringAttributeType)
        let city = attribute("city", .stringAttributeType)
        city.isOptional = !cityRequired
        let zip = attribute("zip", .integer32AttributeType)
        zip.defaultValue = 0
        let latitude = attribute("latitude", .doubleAttributeType)
        let longitude = attribute("longitude", .doubleAttributeType)
        let geo = NSCompositeAttributeDescription()
        geo.name = "geo"
        geo.elements = [latitude, longitude]
        let address = NSCompositeAttributeDescription()
        address.name = "address"
        address.isOptional = addressOptional
        address.elements = [street, city, zip, geo]
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [attribute("name", .stringAttributeType), address, attribute("city", .stringAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [person]
        return model
    }

    nonisolated(unsafe) static let springfield: [String: Any] = ["street": "742 Evergreen Terrace", "city": "Springfield", "zip": 49007,
                                             "geo": ["latitude": 39.8, "longitude": -89.6]]

    @Test func theDescriptionIsACompositeOfItsElements() throws {
        let model = Self.model()
        let address = try #require(model.entitiesByName["Person"]?.attributesByName["address"] as? NSCompositeAttributeDescription)
        #expect(address.attributeType == .compositeAttributeType)
        #expect(address.type == .composite)
        #expect(address.attributeValueClassName == "NSDictionary")
        #expect(address.elements.map(\.name) == ["street", "city", "zip", "geo"])
        let copy = try #require(address.copy() as? NSCompositeAttributeDescription)
        #expect(copy.elements.map(\.name) == ["street", "city", "zip", "geo"])
        #expect(copy.elements[0] !== address.elements[0])
        #expect(copy.versionHash == address.versionHash)
        // The entity's public properties are the composite, never its leaves.
        _ = try TestStack(model: model)
        let person = model.entitiesByName["Person"]!
        #expect(person.properties.map(\.name) == ["name", "address", "city"])
        #expect(person.propertiesByName.keys.sorted() == ["address", "city", "name"])
    }

    @Test func eachLeafIsAColumnNamedAfterTheElementAndTheCompositeHasNone() throws {
        let stack = try TestStack(model: Self.model())
        let person = stack.insert("Person", ["name": "Homer", "address": Self.springfield, "city": "Capital City"])
        try stack.context.save()
        let columns = try stack.rawRows("SELECT name FROM pragma_table_info('ZPERSON')").map { $0[0]! }
        #expect(Set(columns) == ["Z_PK", "Z_ENT", "Z_OPT", "ZNAME", "ZSTREET", "ZCITY", "ZZIP", "ZLATITUDE", "ZLONGITUDE", "ZCITY1"])
        // The element comes before the attribute in the model: it takes ZCITY.
        let row = try stack.rawRows("SELECT ZSTREET, ZCITY, ZZIP, ZLATITUDE, ZLONGITUDE, ZCITY1 FROM ZPERSON")
        #expect(row == [["742 Evergreen Terrace", "Springfield", "49007", "39.8", "-89.6", "Capital City"]])
        _ = person
    }

    @Test func theValueIsADictionaryOfTheElements() throws {
        let stack = try TestStack(model: Self.model())
        let person = stack.insert("Person", ["name": "Homer"])
        // A new object: the elements' defaults only.
        #expect((person.value(forKey: "address") as? [String: Any])?.keys.sorted() == ["zip"])
        person.setValue(Self.springfield, forKey: "address")
        let address = try #require(person.value(forKey: "address") as? [String: Any])
        #expect(address["city"] as? String == "Springfield")
        #expect(address["zip"] as? Int == 49007)
        #expect((address["geo"] as? [String: Any])?["latitude"] as? Double == 39.8)
        #expect(person.value(forKeyPath: "address.city") as? String == "Springfield")
        #expect(person.value(forKeyPath: "address.geo.longitude") as? Double == -89.6)
        #expect((person.value(forKeyPath: "address.geo") as? [String: Any])?.count == 2)
        try stack.context.save()

        // Read back in another stack: the same dictionary.
        let other = try stack.reopen()
        let fetched = try #require(try other.fetch("Person").first)
        let read = try #require(fetched.value(forKey: "address") as? [String: Any])
        #expect(NSDictionary(dictionary: read) == NSDictionary(dictionary: Self.springfield))
        #expect(fetched.value(forKey: "city") == nil)
    }

    @Test func anElementSetByKeyPathChangesOnlyItself() throws {
        let stack = try TestStack(model: Self.model())
        let person = stack.insert("Person", ["name": "Homer", "address": Self.springfield])
        try stack.context.save()
        person.setValue("Shelbyville", forKeyPath: "address.city")
        person.setValue(["latitude": 1.5], forKeyPath: "address.geo")
        #expect(person.changedValues().keys.sorted() == ["address"])
        let changed = try #require(person.changedValues()["address"] as? [String: Any])
        #expect(changed["city"] as? String == "Shelbyville")
        #expect(changed["street"] as? String == "742 Evergreen Terrace")
        #expect(NSDictionary(dictionary: changed["geo"] as! [String: Any]) == NSDictionary(dictionary: ["latitude": 1.5]))
        let committed = try #require(person.committedValues(forKeys: nil)["address"] as? [String: Any])
        #expect(committed["city"] as? String == "Springfield")
        #expect(person.committedValues(forKeys: nil).keys.sorted() == ["address", "city", "name"])
        try stack.context.save()
        #expect(try stack.rawRows("SELECT ZCITY, ZLATITUDE, ZLONGITUDE FROM ZPERSON") == [["Shelbyville", "1.5", nil]])
        // Setting nil clears every element (the element's default is not put back).
        person.setValue(nil, forKey: "address")
        #expect(person.value(forKey: "address") == nil)
        try stack.context.save()
        #expect(try stack.rawRows("SELECT ZSTREET, ZCITY, ZZIP FROM ZPERSON") == [[nil, nil, nil]])
    }

    @Test func fetchesCompareAndSortByElements() throws {
        let stack = try TestStack(model: Self.model())
        for (name, city, zip) in [("Homer", "Springfield", 49007), ("Moe", "Shelbyville", 49008), ("Ned", "Springfield", 49001)] {
            stack.insert("Person", ["name": name, "address": ["city": city, "zip": zip, "geo": ["latitude": Double(zip - 49000)]]])
        }
        try stack.context.save()
        let context = stack.newContext()
        func names(_ format: String, sortedBy key: String = "name", ascending: Bool = true) throws -> [String] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
            request.predicate = NSPredicate(format: format)
            request.sortDescriptors = [NSSortDescriptor(key: key, ascending: ascending)]
            let inStore = try context.fetch(request).map { $0.value(forKey: "name") as! String }
            // The same predicate in memory (the objects are registered now) agrees.
            let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            let inMemory = all.filter { request.predicate!.evaluate(with: $0) }.map { $0.value(forKey: "name") as! String }
            #expect(Set(inMemory) == Set(inStore), "\(format)")
            return inStore
        }
        #expect(try names("address.city == 'Springfield'") == ["Homer", "Ned"])
        #expect(try names("address.zip > 49005", sortedBy: "address.zip", ascending: false) == ["Moe", "Homer"])
        #expect(try names("address.geo.latitude < 7.5") == ["Homer", "Ned"])
        #expect(try names("address.city BEGINSWITH[c] 'shel'") == ["Moe"])
        #expect(try names("address.city.length == 11") == ["Homer", "Moe", "Ned"])
        #expect(try names("name != nil", sortedBy: "address.geo.latitude") == ["Ned", "Homer", "Moe"])
    }

    @Test func aPredicateOnTheWholeCompositeIsAClearError() throws {
        let stack = try TestStack(model: Self.model())
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "address == nil")
        #expect { try stack.context.fetch(request) } throws: { error in
            "\(error)".contains("does not name an element of the composite attribute Person.address")
        }
        request.predicate = NSPredicate(format: "address.country == 'US'")
        #expect(throws: (any Error).self) { try stack.context.fetch(request) }
    }

    @Test func validationChecksTheElementsOfACompositeThatHasAValue() throws {
        let stack = try TestStack(model: Self.model(cityRequired: true))
        let person = stack.insert("Person", ["name": "Homer"])
        // No address at all (only the zip's default is set): its elements are not required…
        person.setValue(nil, forKey: "address")
        try stack.context.save()
        // …but an address without its required city is refused, naming the element.
        person.setValue(["street": "742 Evergreen Terrace"], forKey: "address")
        #expect { try stack.context.save() } throws: { error in
            let error = error as NSError
            return error.code == NSValidationMissingMandatoryPropertyError && error.userInfo[NSValidationKeyErrorKey] as? String == "address.city"
        }
        // A value of the wrong type for an element, and a dictionary with a key that is no element.
        person.setValue(["city": 12], forKey: "address")
        #expect { try stack.context.save() } throws: { error in
            let error = error as NSError
            return error.code == NSManagedObjectValidationError && error.userInfo[NSValidationKeyErrorKey] as? String == "address.city"
        }
        person.setValue("Springfield", forKeyPath: "address.city")
        person.setValue(["city": "Springfield", "country": "US"], forKey: "address")
        #expect { try stack.context.save() } throws: { error in
            let error = error as NSError
            return error.code == NSManagedObjectValidationError && error.userInfo[NSValidationKeyErrorKey] as? String == "address"
        }
        person.setValue("Springfield", forKey: "address")
        #expect { try stack.context.save() } throws: { ($0 as NSError).code == NSManagedObjectValidationError }
        person.setValue(["city": "Springfield"], forKey: "address")
        try stack.context.save()
        #expect(try stack.rawRows("SELECT ZCITY FROM ZPERSON") == [["Springfield"]])
    }

    @Test func aRequiredCompositeNeedsAValue() throws {
        let stack = try TestStack(model: Self.model(addressOptional: false))
        let person = stack.insert("Person", ["name": "Homer"])
        person.setValue(nil, forKey: "address")
        #expect { try stack.context.save() } throws: { error in
            let error = error as NSError
            return error.code == NSValidationMissingMandatoryPropertyError && error.userInfo[NSValidationKeyErrorKey] as? String == "address"
        }
        person.setValue(["city": "Springfield"], forKey: "address")
        try stack.context.save()
    }

    @Test func batchInsertTakesTheCompositeAsADictionary() throws {
        let stack = try TestStack(model: Self.model())
        let insert = NSBatchInsertRequest(entityName: "Person", objects: [
            ["name": "Homer", "address": Self.springfield],
            ["name": "Moe", "address": ["city": "Shelbyville"]],
        ])
        try stack.context.execute(insert)
        let read = try stack.fetch("Person") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(NSDictionary(dictionary: read[0].value(forKey: "address") as! [String: Any]) == NSDictionary(dictionary: Self.springfield))
        #expect(NSDictionary(dictionary: read[1].value(forKey: "address") as! [String: Any]) == NSDictionary(dictionary: ["city": "Shelbyville", "zip": 0]))
        let bad = NSBatchInsertRequest(entityName: "Person", objects: [["name": "Ned", "address": ["country": "US"]]])
        #expect { try stack.context.execute(bad) } throws: { error in
            "\(error)".contains("the value of 'address' is not a dictionary of its elements")
        }
    }

    @Test func aModelWithAnElementACompositeCannotHoldIsRefused() throws {
        let model = Self.model()
        let address = model.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.elements.append(attribute("anything", .undefinedAttributeType))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect { try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil) } throws: { error in
            "\(error)".contains("its element 'address.anything' has a type a composite does not support")
        }
    }

    @Test func theVersionHashCoversTheLeavesButNotNestedCompositesNames() throws {
        let one = Self.model()
        let two = Self.model()
        let geo = (two.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription).elements[3] as! NSCompositeAttributeDescription
        geo.name = "location"
        #expect(one.entityVersionHashesByName == two.entityVersionHashesByName)
        let three = Self.model()
        ((three.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription).elements[0]).name = "road"
        #expect(one.entityVersionHashesByName != three.entityVersionHashesByName)
    }
}

/// Composite attributes through the other stores and the other requests.
@Suite("Composite attributes: stores and requests")
struct CompositeAttributeStoreTests {
    static func people(in stack: TestStack) throws {
        for (name, city, zip) in [("Homer", "Springfield", 49007), ("Moe", "Shelbyville", 49008), ("Ned", "Springfield", 49001)] {
            stack.insert("Person", ["name": name, "address": ["city": city, "zip": zip, "geo": ["latitude": Double(zip - 49000)]]])
        }
        try stack.context.save()
    }

    static func names(_ stack: TestStack, _ format: String, sortedBy key: String = "name") throws -> [String] {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: format)
        request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
        return try stack.newContext().fetch(request).map { $0.value(forKey: "name") as! String }
    }

    @Test func theInMemoryStoreFetchesByElements() throws {
        let stack = try TestStack(model: CompositeAttributeTests.model(), inMemory: true)
        try Self.people(in: stack)
        #expect(try Self.names(stack, "address.city == 'Springfield'") == ["Homer", "Ned"])
        #expect(try Self.names(stack, "address.geo.latitude > 1", sortedBy: "address.zip") == ["Homer", "Moe"])
        let other = stack.newContext()
        let all = try other.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(all.compactMap { $0.value(forKeyPath: "address.city") as? String }.sorted() == ["Shelbyville", "Springfield", "Springfield"])
    }

    @Test(arguments: TestStoreKind.available)
    func aPostgreSQLOrSQLiteStoreKeepsEachLeafInAColumn(_ kind: TestStoreKind) throws {
        let stack = try TestStack(kind, model: CompositeAttributeTests.model())
        try Self.people(in: stack)
        #expect(try stack.rawRows("SELECT \"ZCITY\", \"ZZIP\" FROM \"ZPERSON\" ORDER BY \"ZZIP\"") ==
                [["Springfield", "49001"], ["Springfield", "49007"], ["Shelbyville", "49008"]])
        #expect(try Self.names(stack, "address.city == 'Springfield' AND address.geo.latitude < 5") == ["Ned"])
        let fetched = try #require(try stack.reopen().fetch("Person") { $0.predicate = NSPredicate(format: "name == 'Moe'") }.first)
        #expect(NSDictionary(dictionary: fetched.value(forKey: "address") as! [String: Any]) ==
                NSDictionary(dictionary: ["city": "Shelbyville", "zip": 49008, "geo": ["latitude": 8.0]]))
    }

    @Test func dictionaryFetchesTakeTheCompositeOrAnElement() throws {
        let stack = try TestStack(model: CompositeAttributeTests.model())
        try Self.people(in: stack)
        let request = NSFetchRequest<NSDictionary>(entityName: "Person")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "address"]
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        let rows = try stack.newContext().fetch(request)
        #expect(rows.count == 3)
        #expect(rows.first?["address"] as? NSDictionary == NSDictionary(dictionary: ["city": "Springfield", "zip": 49007, "geo": ["latitude": 7.0]]))
        request.propertiesToFetch = ["address.city"]
        request.returnsDistinctResults = true
        request.sortDescriptors = [NSSortDescriptor(key: "address.city", ascending: true)]
        let cities = try stack.newContext().fetch(request)
        #expect(cities.map { $0["address.city"] as? String } == ["Shelbyville", "Springfield"])
    }

    @Test func batchUpdatesSetElements() throws {
        let stack = try TestStack(model: CompositeAttributeTests.model())
        try Self.people(in: stack)
        let update = NSBatchUpdateRequest(entityName: "Person")
        update.predicate = NSPredicate(format: "address.city == 'Springfield'")
        update.propertiesToUpdate = ["address.city": "Capital City"]
        update.resultType = .updatedObjectsCountResultType
        let result = try stack.context.execute(update) as! NSBatchUpdateResult
        #expect(result.result as? Int == 2)
        #expect(try Self.names(stack, "address.city == 'Capital City'") == ["Homer", "Ned"])
    }

    @Test func historyReportsTheCompositeChanged() throws {
        let folder = try TemporaryFolder()
        let stack = try TestStack(model: CompositeAttributeTests.model(), directory: folder.url,
                                  options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        let person = stack.insert("Person", ["name": "Homer", "address": ["city": "Springfield"]])
        try stack.context.save()
        person.setValue("Shelbyville", forKeyPath: "address.city")
        try stack.context.save()
        let result = try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)) as! NSPersistentHistoryResult
        let transactions = result.result as! [NSPersistentHistoryTransaction]
        let update = try #require(transactions.last?.changes?.first)
        #expect(update.changeType == .update)
        #expect(update.updatedProperties?.map { $0.name } == ["address"])
    }
}

/// Composite attributes in constraints, indexes, conflicts, history tombstones and migration.
@Suite("Composite attributes: constraints, conflicts, migration")
struct CompositeAttributeSchemaTests {
    @Test(arguments: [NSSQLiteStoreType, NSInMemoryStoreType])
    func aUniquenessConstraintOnAnElementMergesByIt(_ type: String) throws {
        let model = CompositeAttributeTests.model()
        let person = model.entitiesByName["Person"]!
        // The constraint names the element by key path; the index gives the element's description.
        person.uniquenessConstraints = [["address.city"]]
        let zip = (person.attributesByName["address"] as! NSCompositeAttributeDescription).elements[2]
        person.indexes = [NSFetchIndexDescription(name: "byZip", elements: [NSFetchIndexElementDescription(property: zip, collationType: .binary)])]
        let stack = try TestStack(model: model, inMemory: type == NSInMemoryStoreType)
        stack.insert("Person", ["name": "Homer", "address": ["city": "Springfield"]])
        try stack.context.save()
        let other = stack.newContext()
        other.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        let ned = NSEntityDescription.insertNewObject(forEntityName: "Person", into: other)
        ned.setValue("Ned", forKey: "name")
        ned.setValue(["city": "Springfield", "street": "744 Evergreen Terrace"], forKey: "address")
        try other.save()
        let people = try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(people.count == 1)
        #expect(people.first?.value(forKey: "name") as? String == "Ned")
        #expect(people.first?.value(forKeyPath: "address.street") as? String == "744 Evergreen Terrace")
        if type == NSSQLiteStoreType {
            let indexes = try stack.rawRows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZPERSON'").map { $0[0]! }
            #expect(indexes.contains("Z_Person_byZip"))
            #expect(indexes.contains { $0.hasPrefix("Z_Person_UNIQUE_") })
        }
    }

    @Test func aConstraintOrIndexOnTheWholeCompositeIsAModelError() throws {
        let model = CompositeAttributeTests.model()
        model.entitiesByName["Person"]!.uniquenessConstraints = [["address"]]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect { try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil) } throws: { error in
            (error as NSError).code == NSPersistentStoreInvalidTypeError && "\(error)".contains("names the composite attribute 'address'")
        }
    }

    @Test func aConflictsSnapshotsHoldTheCompositeAsADictionary() throws {
        let stack = try TestStack(model: CompositeAttributeTests.model())
        let person = stack.insert("Person", ["name": "Homer", "address": ["city": "Springfield"]])
        try stack.context.save()
        let other = stack.newContext()
        let copy = try other.existingObject(with: person.objectID)
        copy.setValue("Shelbyville", forKeyPath: "address.city")
        try other.save()
        person.setValue("Capital City", forKeyPath: "address.city")
        #expect { try stack.context.save() } throws: { error in
            let conflicts = (error as NSError).userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [NSMergeConflict] ?? []
            guard let conflict = conflicts.first else { return false }
            return (conflict.persistedSnapshot?["address"] as? [String: Any])?["city"] as? String == "Shelbyville"
                && (conflict.cachedSnapshot?["address"] as? [String: Any])?["city"] as? String == "Springfield"
                && conflict.persistedSnapshot?["address.city"] == nil
        }
    }

    @Test func aDeletedObjectsTombstoneKeepsTheComposite() throws {
        let model = CompositeAttributeTests.model()
        let address = model.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.preservesValueInHistoryOnDeletion = true
        let folder = try TemporaryFolder()
        let stack = try TestStack(model: model, directory: folder.url, options: [NSPersistentHistoryTrackingKey: true as NSNumber])
        let person = stack.insert("Person", ["name": "Homer", "address": ["city": "Springfield", "geo": ["latitude": 1.5]]])
        try stack.context.save()
        stack.context.delete(person)
        try stack.context.save()
        let result = try stack.context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)) as! NSPersistentHistoryResult
        let delete = try #require((result.result as! [NSPersistentHistoryTransaction]).last?.changes?.first)
        #expect(delete.changeType == .delete)
        let kept = try #require(delete.tombstone?["address"] as? [String: Any])
        #expect(NSDictionary(dictionary: kept) == NSDictionary(dictionary: ["city": "Springfield", "geo": ["latitude": 1.5]]))
    }

    @Test func lightweightMigrationAddsACompositeAndItsElements() throws {
        typealias L = SQLiteLightweightMigrationTests
        let folder = try TemporaryFolder()
        // Version 1: no composite. Version 2: the composite without zip or geo. Version 3: all of it.
        let v1 = NSManagedObjectModel()
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [attribute("name", .stringAttributeType), attribute("city", .stringAttributeType)]
        v1.entities = [person]
        let v2 = CompositeAttributeTests.model()
        let address = v2.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.elements = Array(address.elements.prefix(2))
        let v3 = CompositeAttributeTests.model()
        let url = try L.makeStore(v1, in: folder) { context in _ = L.insert("Person", ["name": "Homer", "city": "Capital City"], into: context) }
        try L.migrate(url, from: v1, to: v2)
        let second = try L.open(url, v2)
        let homer = try #require(try L.fetch("Person", second).first)
        #expect(homer.value(forKey: "address") == nil)
        #expect(homer.value(forKey: "city") as? String == "Capital City")
        homer.setValue(["city": "Springfield", "street": "742 Evergreen Terrace"], forKey: "address")
        try second.save()
        try second.persistentStoreCoordinator!.remove(second.persistentStoreCoordinator!.persistentStores[0])

        try L.migrate(url, from: v2, to: v3)
        let third = try L.open(url, v3)
        let migrated = try #require(try L.fetch("Person", third).first)
        #expect(NSDictionary(dictionary: migrated.value(forKey: "address") as! [String: Any]) ==
                NSDictionary(dictionary: ["city": "Springfield", "street": "742 Evergreen Terrace", "zip": 0])) // a new column takes its default
        #expect(migrated.value(forKey: "city") as? String == "Capital City")
        #expect(Set(try RawSQLite.query(url.path, "SELECT name FROM pragma_table_info('ZPERSON')").map { $0[0]! })
                .isSuperset(of: ["ZSTREET", "ZCITY", "ZZIP", "ZLATITUDE", "ZLONGITUDE", "ZCITY1"]))
    }

    @Test func batchUpdatesSetAWholeComposite() throws {
        let stack = try TestStack(model: CompositeAttributeTests.model())
        stack.insert("Person", ["name": "Homer", "address": ["city": "Springfield", "street": "742 Evergreen Terrace"]])
        try stack.context.save()
        let update = NSBatchUpdateRequest(entityName: "Person")
        update.propertiesToUpdate = ["address": ["city": "Capital City"]]
        try stack.context.execute(update)
        #expect(try stack.rawRows("SELECT ZSTREET, ZCITY FROM ZPERSON") == [[nil, "Capital City"]])
    }
}

/// An `Observable` class of ``CompositeAttributeTests/model(addressOptional:cityRequired:)``'s `Person`.
final class ObservedResident: NSManagedObject, Observable {
    @Managed var name: String?
    @Managed var address: [String: Any]?
}

/// What a review of the first version found: migrations that rebuild or refill columns,
/// defaults, observation, model files naming elements, element type changes.
@Suite("Composite attributes: review")
struct CompositeAttributeReviewTests {
    typealias L = SQLiteLightweightMigrationTests

    @Test func laterMigrationsKeepTheElementsValues() throws {
        let folder = try TemporaryFolder()
        let v1 = CompositeAttributeTests.model(cityRequired: true)
        let url = try L.makeStore(v1, in: folder) { context in
            _ = L.insert("Person", ["name": "Homer", "address": ["city": "Springfield", "zip": 49007, "geo": ["latitude": 1.5]]], into: context)
        }
        // An added attribute (the table is altered in place)…
        let v2 = CompositeAttributeTests.model(cityRequired: true)
        v2.entitiesByName["Person"]!.properties.append(attribute("nickname", .stringAttributeType))
        try L.migrate(url, from: v1, to: v2)
        // …then an added entity that comes first in name order (entity numbers change: the table is rebuilt).
        let v3 = CompositeAttributeTests.model(cityRequired: true)
        v3.entitiesByName["Person"]!.properties.append(attribute("nickname", .stringAttributeType))
        let aardvark = NSEntityDescription()
        aardvark.name = "Aardvark"
        aardvark.properties = [attribute("size", .integer16AttributeType)]
        v3.entities = [aardvark] + v3.entities
        try L.migrate(url, from: v2, to: v3)
        let context = try L.open(url, v3)
        let homer = try #require(try L.fetch("Person", context).first)
        #expect(NSDictionary(dictionary: homer.value(forKey: "address") as! [String: Any]) ==
                NSDictionary(dictionary: ["city": "Springfield", "zip": 49007, "geo": ["latitude": 1.5]]))
    }

    @Test func anElementWhoseTypeChangedIsRefusedByInference() throws {
        let v1 = CompositeAttributeTests.model()
        let v2 = CompositeAttributeTests.model()
        let address = v2.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.elements[2].attributeType = .stringAttributeType // zip: Integer 32 → String
        #expect { try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2) } throws: { error in
            (error as NSError).code == NSInferredMappingModelError && "\(error)".contains("Person.address.zip")
        }
    }

    @Test func theCompositesDefaultGoesToItsElements() throws {
        let model = CompositeAttributeTests.model()
        let address = model.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.defaultValue = ["city": "Nowhere", "zip": 1]
        let stack = try TestStack(model: model)
        let person = stack.insert("Person", ["name": "Homer"])
        // The element's own default (zip 0) wins over the composite's.
        #expect(NSDictionary(dictionary: person.value(forKey: "address") as! [String: Any]) == NSDictionary(dictionary: ["city": "Nowhere", "zip": 0]))
        person.setValue("Springfield", forKeyPath: "address.city")
        #expect(person.value(forKeyPath: "address.city") as? String == "Springfield")
        #expect((person.value(forKey: "address") as? [String: Any])?["city"] as? String == "Springfield")
    }

    @Test func observationSeesTheCompositeChangeThroughItsElements() throws {
        let model = CompositeAttributeTests.model()
        model.entitiesByName["Person"]!.managedObjectClassName = String(reflecting: ObservedResident.self)
        let stack = try TestStack(model: model)
        let homer = ObservedResident(context: stack.context)
        homer.address = ["city": "Springfield"]
        try stack.context.save()
        let whole = tracking { _ = homer.address }
        homer.setValue("Shelbyville", forKeyPath: "address.city")
        #expect(whole.value == 1)
        let again = tracking { _ = homer.address }
        stack.context.rollback()
        #expect(again.value == 1)
        #expect((homer.address?["city"] as? String) == "Springfield")
    }

    @Test func aModelFileMayConstrainAndIndexAnElement() throws {
        let result = try XcodeModelReaderTests.parse("""
            <entity name="Person" syncable="YES">
                <attribute name="home" optional="YES" attributeType="Composite" composite="Address"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="home.city"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
                <fetchIndex name="byCity">
                    <fetchIndexElement property="home.city" type="Binary" order="ascending"/>
                </fetchIndex>
            </entity>
            <compositeAttribute name="Address">
                <attribute name="city" optional="YES" attributeType="String"/>
            </compositeAttribute>
        """)
        let person = try #require(result.model.entitiesByName["Person"])
        #expect(person.names(ofConstraint: person.uniquenessConstraints[0]) == ["home.city"])
        #expect(person.name(ofIndexElement: person.indexes[0].elements[0]) == "home.city")
        let folder = try TemporaryFolder()
        let stack = try TestStack(model: result.model, directory: folder.url)
        let indexes = try stack.rawRows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZPERSON'").map { $0[0]! }
        #expect(indexes.contains("Z_Person_byCity"))
        #expect(indexes.contains { $0.hasPrefix("Z_Person_UNIQUE_home.city") })
    }

    @Test func batchInsertByObjectsChecksTheComposite() throws {
        let stack = try TestStack(model: CompositeAttributeTests.model(addressOptional: false, cityRequired: true))
        var made = 0
        let insert = NSBatchInsertRequest(entityName: "Person") { (object: NSManagedObject) -> Bool in
            guard made < 2 else { return true }
            made += 1
            object.setValue("Person \(made)", forKey: "name")
            object.setValue(["city": "Springfield", "geo": ["latitude": Double(made)]], forKey: "address")
            return false
        }
        try stack.context.execute(insert)
        #expect(try stack.rawRows("SELECT ZCITY, ZLATITUDE FROM ZPERSON ORDER BY Z_PK") == [["Springfield", "1.0"], ["Springfield", "2.0"]])
        // No address: its zip's default gives it a value, without the required city.
        var asked = false
        let none = NSBatchInsertRequest(entityName: "Person") { (object: NSManagedObject) -> Bool in
            if asked { return true }
            asked = true
            object.setValue("Nobody", forKey: "name")
            object.setValue(nil, forKey: "address")
            return false
        }
        #expect { try stack.context.execute(none) } throws: { error in
            let error = error as NSError
            return error.code == NSValidationMissingMandatoryPropertyError && error.userInfo[NSValidationKeyErrorKey] as? String == "address.city"
        }
        #expect(try stack.rawRows("SELECT count(*) FROM ZPERSON") == [["2"]])
    }
}

extension CompositeAttributeReviewTests {
    @Test func aKeyOfAnElementsValueAndATransformableElement() throws {
        let model = CompositeAttributeTests.model()
        let address = model.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.elements.append(attribute("notes", .transformableAttributeType))
        let stack = try TestStack(model: model)
        let person = stack.insert("Person", ["name": "Homer", "address": ["city": "Springfield", "notes": ["yellow", "house"]]])
        #expect(person.value(forKeyPath: "address.city.length") as? Int == 11)
        try stack.context.save()
        let request = NSFetchRequest<NSDictionary>(entityName: "Person")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["address"]
        let row = try #require(try stack.newContext().fetch(request).first)
        #expect(((row["address"] as? [String: Any])?["notes"] as? NSArray)?.count == 2)
        let read = try #require(try stack.reopen().fetch("Person").first)
        #expect((read.value(forKeyPath: "address.notes") as? NSArray)?.count == 2)
    }
}

extension CompositeAttributeReviewTests {
    @Test func aStoreYouWriteKeepsTheCompositeAsItsDictionary() throws {
        DictionaryStore.register()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: CompositeAttributeTests.model())
        let store = try #require(try coordinator.addPersistentStore(ofType: DictionaryStore.storeType, configurationName: nil,
                                                                     at: URL(string: "dictionary://composites")!) as? DictionaryStore)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        person.setValue("Homer", forKey: "name")
        person.setValue(CompositeAttributeTests.springfield, forKey: "address")
        try context.save()
        // The store's record holds the composite's dictionary under its name, never a leaf.
        let record = try #require(store.records.values.first)
        #expect(record.values["address"] is [String: Any])
        #expect(record.values.keys.allSatisfy { !$0.contains(".") })

        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = coordinator
        let read = try other.existingObject(with: person.objectID)
        #expect(NSDictionary(dictionary: read.value(forKey: "address") as! [String: Any]) == NSDictionary(dictionary: CompositeAttributeTests.springfield))
        let request = NSFetchRequest<NSDictionary>(entityName: "Person")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "address"]
        let row = try #require(try other.fetch(request).first)
        #expect(row["address"] as? NSDictionary == NSDictionary(dictionary: CompositeAttributeTests.springfield))
    }

    @Test(arguments: TestStoreKind.available)
    func requestsOnEachStore(_ kind: TestStoreKind) throws {
        let model = CompositeAttributeTests.model()
        model.entitiesByName["Person"]!.uniquenessConstraints = [["address.city"]]
        let stack = try TestStack(kind, model: model)
        try stack.context.execute(NSBatchInsertRequest(entityName: "Person", objects: [
            ["name": "Homer", "address": CompositeAttributeTests.springfield],
            ["name": "Moe", "address": ["city": "Shelbyville", "zip": 49008]],
            ["name": "Ned", "address": ["city": "Springfield", "zip": 49001]], // the same city: an upsert of Homer's row
        ]))
        let update = NSBatchUpdateRequest(entityName: "Person")
        update.predicate = NSPredicate(format: "address.zip > 49005")
        update.propertiesToUpdate = ["address.geo": ["latitude": 2.5]]
        update.resultType = .updatedObjectsCountResultType
        #expect((try stack.context.execute(update) as? NSBatchUpdateResult)?.result as? Int == 1)
        let request = NSFetchRequest<NSDictionary>(entityName: "Person")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "address"]
        request.sortDescriptors = [NSSortDescriptor(key: "address.city", ascending: true)]
        let rows = try stack.newContext().fetch(request)
        #expect(rows.map { $0["name"] as? String } == ["Moe", "Ned"])
        #expect(rows[0]["address"] as? NSDictionary == NSDictionary(dictionary: ["city": "Shelbyville", "zip": 49008, "geo": ["latitude": 2.5]]))
        #expect(rows[1]["address"] as? NSDictionary == NSDictionary(dictionary: ["city": "Springfield", "zip": 49001]))
    }
}

/// What a second review found: model copies, distinct fetches on PostgreSQL, heavyweight
/// migration, one composite in two entities.
@Suite("Composite attributes: second review")
struct CompositeAttributeSecondReviewTests {
    typealias L = SQLiteLightweightMigrationTests

    @Test func aCopiedModelKeepsConstraintsAndIndexesOnElements() throws {
        let model = CompositeAttributeTests.model()
        let person = model.entitiesByName["Person"]!
        let address = person.attributesByName["address"] as! NSCompositeAttributeDescription
        person.uniquenessConstraints = [[address.elements[1]]] // city, by its description
        person.indexes = [NSFetchIndexDescription(name: "byZip", elements: [NSFetchIndexElementDescription(property: address.elements[2], collationType: .binary)])]
        let copy = model.copy() as! NSManagedObjectModel
        #expect(copy.entityVersionHashesByName == model.entityVersionHashesByName)
        let copied = copy.entitiesByName["Person"]!
        #expect(copied.names(ofConstraint: copied.uniquenessConstraints[0]) == ["address.city"])
        #expect(copied.name(ofIndexElement: copied.indexes[0].elements[0]) == "address.zip")
        let stack = try TestStack(model: copy)
        let indexes = try stack.rawRows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZPERSON'").map { $0[0]! }
        #expect(indexes.contains("Z_Person_byZip"))
        #expect(indexes.contains("Z_Person_UNIQUE_address.city"))
    }

    @Test(arguments: TestStoreKind.available)
    func aDistinctFetchOfTheCompositeSortsByAnElement(_ kind: TestStoreKind) throws {
        let stack = try TestStack(kind, model: CompositeAttributeTests.model())
        for (city, zip) in [("springfield", 2), ("Shelbyville", 1), ("Springfield", 3), ("Shelbyville", 1)] {
            stack.insert("Person", ["address": ["city": city, "zip": zip]])
        }
        try stack.context.save()
        let request = NSFetchRequest<NSDictionary>(entityName: "Person")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["address"]
        request.returnsDistinctResults = true
        request.sortDescriptors = [NSSortDescriptor(key: "address.city", ascending: true, selector: "caseInsensitiveCompare:")]
        let cities = try stack.newContext().fetch(request).map { ($0["address"] as? [String: Any])?["city"] as? String }
        #expect(cities.count == 3)
        #expect(cities.first == "Shelbyville")
        request.sortDescriptors = [NSSortDescriptor(key: "address", ascending: true)]
        #expect(throws: (any Error).self) { try stack.newContext().fetch(request) }
    }

    @Test func heavyweightMigrationFitsTheDictionaryToTheNewElements() throws {
        let folder = try TemporaryFolder()
        let v1 = CompositeAttributeTests.model()
        let v2 = CompositeAttributeTests.model()
        let address = v2.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        let country = attribute("country", .stringAttributeType)
        country.defaultValue = "US"
        address.elements = [address.elements[0], address.elements[1], country] // zip and geo dropped, country added
        let old = try L.makeStore(v1, in: folder) { context in
            _ = L.insert("Person", ["name": "Homer", "address": ["street": "742 Evergreen Terrace", "zip": 49007, "geo": ["latitude": 1.5]]], into: context)
        }
        let new = folder.url.appendingPathComponent("New.sqlite")
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
        try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(from: old, type: .sqlite, mapping: mapping, to: new, type: .sqlite)
        let homer = try #require(try L.fetch("Person", L.open(new, v2)).first)
        // The street kept, the city (nil in the source) nil, the new country its default; zip and geo gone.
        #expect(NSDictionary(dictionary: homer.value(forKey: "address") as! [String: Any]) ==
                NSDictionary(dictionary: ["street": "742 Evergreen Terrace", "country": "US"]))
    }

    @Test func oneCompositeDescriptionInTwoEntitiesIsRefused() throws {
        let model = CompositeAttributeTests.model()
        let address = model.entitiesByName["Person"]!.attributesByName["address"]!
        let shop = NSEntityDescription()
        shop.name = "Shop"
        shop.properties = [address]
        model.entities = model.entities + [shop]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect { try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil) } throws: { error in
            "\(error)".contains("hold the same composite attribute description 'address'")
        }
    }
}

extension CompositeAttributeSecondReviewTests {
    /// An element of a composite whose model is in use may not change, as any property of it
    /// (its leaves, hash and columns were fixed when the model froze).
    @Test func anElementOfAModelInUseCannotChange() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = CompositeAttributeTests.model()
            _ = try TestStack(model: model, inMemory: true)
            let address = model.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
            (address.elements[3] as! NSCompositeAttributeDescription).elements[0].isOptional = false
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Can't modify the property 'latitude' of a managed object model that is in use"), "\(message)")
        // Before the model is in use, it may.
        let model = CompositeAttributeTests.model()
        let address = model.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.elements[0].isOptional = false
        #expect(address.elements[0].isOptional == false)
    }
}

/// Renamed elements (a renaming identifier on an element, or on the composite) are followed by
/// both kinds of migration, as renamed attributes are.
@Suite("Composite attributes: renamed elements")
struct CompositeAttributeRenamingTests {
    typealias L = SQLiteLightweightMigrationTests

    /// `model()` with `address.city` renamed `town`, `address.geo.latitude` renamed `lat`, and,
    /// when `renamingComposite`, `address` renamed `home`.
    static func renamedModel(renamingComposite: Bool = false) -> NSManagedObjectModel {
        let model = CompositeAttributeTests.model()
        let address = model.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.elements[1].name = "town"
        address.elements[1].renamingIdentifier = "city"
        let geo = address.elements[3] as! NSCompositeAttributeDescription
        geo.elements[0].name = "lat"
        geo.elements[0].renamingIdentifier = "latitude"
        if renamingComposite {
            address.name = "home"
            address.renamingIdentifier = "address"
        }
        return model
    }

    nonisolated(unsafe) static let homer: [String: Any] = ["street": "742 Evergreen Terrace", "city": "Springfield", "zip": 49007,
                                       "geo": ["latitude": 39.8, "longitude": -89.6]]
    nonisolated(unsafe) static let renamedHomer: [String: Any] = ["street": "742 Evergreen Terrace", "town": "Springfield", "zip": 49007,
                                              "geo": ["lat": 39.8, "longitude": -89.6]]

    @Test(arguments: [false, true])
    func lightweightMigrationKeepsTheValuesOfRenamedElements(_ renamingComposite: Bool) throws {
        let folder = try TemporaryFolder()
        let v1 = CompositeAttributeTests.model()
        let url = try L.makeStore(v1, in: folder) { context in
            _ = L.insert("Person", ["name": "Homer", "address": Self.homer], into: context)
        }
        let v2 = Self.renamedModel(renamingComposite: renamingComposite)
        try L.migrate(url, from: v1, to: v2)
        let context = try L.open(url, v2)
        let person = try #require(try L.fetch("Person", context).first)
        let key = renamingComposite ? "home" : "address"
        #expect(NSDictionary(dictionary: person.value(forKey: key) as! [String: Any]) == NSDictionary(dictionary: Self.renamedHomer))
        // The renamed leaves are fetchable by their new key paths.
        let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
        request.predicate = NSPredicate(format: "\(key).town == 'Springfield' AND \(key).geo.lat > 39")
        #expect(try context.count(for: request) == 1)
    }

    @Test func heavyweightMigrationKeepsTheValuesOfRenamedElements() throws {
        let folder = try TemporaryFolder()
        let v1 = CompositeAttributeTests.model()
        let old = try L.makeStore(v1, in: folder) { context in
            _ = L.insert("Person", ["name": "Homer", "address": Self.homer], into: context)
        }
        let v2 = Self.renamedModel(renamingComposite: true)
        let new = folder.url.appendingPathComponent("New.sqlite")
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
        try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(from: old, type: .sqlite, mapping: mapping, to: new, type: .sqlite)
        let person = try #require(try L.fetch("Person", L.open(new, v2)).first)
        #expect(NSDictionary(dictionary: person.value(forKey: "home") as! [String: Any]) == NSDictionary(dictionary: Self.renamedHomer))
    }

    @Test func aRenamedElementWhoseTypeChangedIsRefused() throws {
        let v1 = CompositeAttributeTests.model()
        let v2 = CompositeAttributeTests.model()
        let address = v2.entitiesByName["Person"]!.attributesByName["address"] as! NSCompositeAttributeDescription
        address.elements[2].name = "postcode"
        address.elements[2].renamingIdentifier = "zip"
        address.elements[2].attributeType = .stringAttributeType // Integer 32 → String
        #expect { try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2) } throws: { error in
            (error as NSError).code == NSInferredMappingModelError && "\(error)".contains("Person.address.postcode")
        }
    }
}
