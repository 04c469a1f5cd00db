import Foundation
import Testing
@testable import CoreData
import TestSupport

// `@Managed` accessors against key-value coding, change tracking, inverse maintenance, saving and
// validation. The classes are prefixed (`MM`) so that other test files may declare their own `Car`.

final class MMCar: NSManagedObject {
    @Managed var name: String?
    @Managed var year: Int16
    @Managed var price: Double
    @Managed var owner: MMPerson?
    @Managed var passengers: Set<MMPerson>
    @Managed var stops: NSOrderedSet?
    @Managed var tags: [String]?

    // Every hot type, non-optional and optional, each on its own attribute.
    @Managed var int: Int
    @Managed var int16: Int16
    @Managed var int32: Int32
    @Managed var int64: Int64
    @Managed var double: Double
    @Managed var float: Float
    @Managed var bool: Bool
    @Managed var string: String
    @Managed var date: Date
    @Managed var data: Data
    @Managed var uuid: UUID
    @Managed var url: URL
    @Managed var decimal: Decimal

    @Managed var optInt: Int?
    @Managed var optInt16: Int16?
    @Managed var optInt32: Int32?
    @Managed var optInt64: Int64?
    @Managed var optDouble: Double?
    @Managed var optFloat: Float?
    @Managed var optBool: Bool?
    @Managed var optString: String?
    @Managed var optDate: Date?
    @Managed var optData: Data?
    @Managed var optUUID: UUID?
    @Managed var optURL: URL?
    @Managed var optDecimal: Decimal?
}

extension MMCar {
    // What Xcode's codegen writes; `@nonobjc` is accepted on Linux.
    @nonobjc public class func fetchRequest() -> NSFetchRequest<MMCar> {
        NSFetchRequest<MMCar>(entityName: "Car")
    }

    // A property of a Swift type that does not match the attribute's (Integer 16): converted, range-checked.
    @Managed var wideYear: Int
}

final class MMPerson: NSManagedObject {
    @Managed public var name: String!
    @Managed public var age: NSNumber?
    @Managed var cars: NSSet?
    @Managed var rides: [MMCar]
    @Managed var stopCar: MMCar?
}

/// Sources shared with Apple platforms (docs/PORTING.md): compiled here, not run.
#if canImport(ObjectiveC)
@objc(MMShared)
#endif
final class MMShared: NSManagedObject {}

extension MMShared {
#if canImport(ObjectiveC)
    @NSManaged public var name: String?
#else
    @Managed public var name: String?
#endif

#if canImport(ObjectiveC)
    @NSManaged
#else
    @Managed
#endif
    public var year: Int16
}

/// A generic class: no static key storage, the key is made at each access.
final class MMBox<Content>: NSManagedObject {
    @Managed var name: String?
    @Managed var year: Int16
}

extension MMCar {
    /// A hand-written accessor on the same runtime.
    private static let yearKey = ManagedPropertyKey("year")
    var modelYear: Int {
        get { Int(managedValue(for: Self.yearKey, as: Int16.self)) }
        set { setManagedValue(Int16(newValue), for: Self.yearKey) }
    }
}

/// Signed integer types beyond the four of Apple's integer attributes: stored as integers too.
final class MMOtherIntegers: NSManagedObject {
    @Managed var int8: Int8
    @Managed var optInt8: Int8?
    @Managed var int128: Int128
    @Managed var optInt128: Int128?
}

/// A class whose entity lacks one of its properties.
final class MMStray: NSManagedObject {
    @Managed var missing: String?
}

/// A sub-entity's class: inherited `@Managed` properties keep working.
final class MMSportsCar: NSManagedObject {
    @Managed var name: String?
    @Managed var topSpeed: Int32
}

enum ManagedTestModel {
    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        return attribute
    }

    static func relationship(_ name: String, to destination: NSEntityDescription, toMany: Bool, ordered: Bool = false) -> NSRelationshipDescription {
        let relationship = NSRelationshipDescription()
        relationship.name = name
        relationship.destinationEntity = destination
        relationship.maxCount = toMany ? 0 : 1
        relationship.isOrdered = ordered
        return relationship
    }

    static let scalarTypes: [(String, NSAttributeType)] = [
        ("int", .integer64AttributeType), ("int16", .integer16AttributeType), ("int32", .integer32AttributeType),
        ("int64", .integer64AttributeType), ("double", .doubleAttributeType), ("float", .floatAttributeType),
        ("bool", .booleanAttributeType), ("string", .stringAttributeType), ("date", .dateAttributeType),
        ("data", .binaryDataAttributeType), ("uuid", .UUIDAttributeType), ("url", .URIAttributeType),
        ("decimal", .decimalAttributeType),
    ]

    /// Car (every attribute type, to-one owner, many-to-many passengers, ordered stops, transformable
    /// tags), Person, and SportsCar (a sub-entity of Car).
    static func make(sportsCar: Bool = false) -> NSManagedObjectModel {
        let car = NSEntityDescription()
        car.name = "Car"
        car.managedObjectClassName = NSStringFromClass(MMCar.self)
        let person = NSEntityDescription()
        person.name = "Person"
        person.managedObjectClassName = NSStringFromClass(MMPerson.self)

        let tags = attribute("tags", .transformableAttributeType)
        tags.valueTransformerName = NSValueTransformerName.secureUnarchiveFromDataTransformerName.rawValue
        var carProperties: [NSPropertyDescription] = [
            attribute("name", .stringAttributeType),
            attribute("year", .integer16AttributeType),
            attribute("price", .doubleAttributeType),
            attribute("wideYear", .integer16AttributeType),
            tags,
        ]
        for (name, type) in scalarTypes {
            carProperties.append(attribute(name, type))
            carProperties.append(attribute("opt" + name.prefix(1).uppercased() + name.dropFirst(), type))
        }
        // `optUuid`/`optUrl` above; the Swift names are `optUUID`/`optURL`.
        for property in carProperties where property.name == "optUuid" || property.name == "optUrl" {
            property.name = property.name == "optUuid" ? "optUUID" : "optURL"
        }
        let owner = relationship("owner", to: person, toMany: false)
        let passengers = relationship("passengers", to: person, toMany: true)
        let stops = relationship("stops", to: person, toMany: true, ordered: true)
        let cars = relationship("cars", to: car, toMany: true)
        let rides = relationship("rides", to: car, toMany: true)
        let stopCar = relationship("stopCar", to: car, toMany: false)
        owner.inverseRelationship = cars
        cars.inverseRelationship = owner
        passengers.inverseRelationship = rides
        rides.inverseRelationship = passengers
        stops.inverseRelationship = stopCar
        stopCar.inverseRelationship = stops
        car.properties = carProperties + [owner, passengers, stops]
        person.properties = [attribute("name", .stringAttributeType), attribute("age", .integer32AttributeType), cars, rides, stopCar]

        let model = NSManagedObjectModel()
        if sportsCar {
            let sports = NSEntityDescription()
            sports.name = "SportsCar"
            sports.managedObjectClassName = NSStringFromClass(MMSportsCar.self)
            sports.properties = [attribute("topSpeed", .integer32AttributeType)]
            car.subentities = [sports]
            model.entities = [car, person, sports]
        } else {
            model.entities = [car, person]
        }
        return model
    }

    /// A context on a SQLite store in a fresh temporary directory (removed by the caller).
    static func context(model: NSManagedObjectModel? = nil, at url: URL? = nil) throws -> (NSManagedObjectContext, URL) {
        let storeURL: URL
        if let url {
            storeURL = url
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-managed-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            storeURL = directory.appendingPathComponent("Cars.sqlite")
        }
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model ?? make())
        _ = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: storeURL, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (context, storeURL)
    }

    /// A second context on the same coordinator.
    static func sibling(of context: NSManagedObjectContext) -> NSManagedObjectContext {
        let other = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        other.persistentStoreCoordinator = context.persistentStoreCoordinator
        return other
    }

    static func remove(_ storeURL: URL) {
        try? FileManager.default.removeItem(at: storeURL.deletingLastPathComponent())
    }
}

@Suite("@Managed accessors")
struct ManagedMacroTests {
    static let date = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let url = URL(string: "https://example.com/cars?id=1")!
    // SQLite keeps decimals as REAL (as Apple's store does): use one that a Double holds exactly.
    static let decimal = Decimal(string: "12345.625")!

    static func fill(_ car: MMCar) {
        car.name = "Model T"
        car.year = 1908
        car.price = 825.5
        car.int = 1 << 40
        car.int16 = -16
        car.int32 = 1 << 30
        car.int64 = -(1 << 50)
        car.double = 2.5
        car.float = 1.25
        car.bool = true
        car.string = "string"
        car.date = date
        car.data = Data([1, 2, 3])
        car.uuid = uuid
        car.url = url
        car.decimal = decimal
        car.optInt = 7
        car.optInt16 = 16
        car.optInt32 = 32
        car.optInt64 = 64
        car.optDouble = 0.5
        car.optFloat = 0.25
        car.optBool = false
        car.optString = "opt"
        car.optDate = date
        car.optData = Data([9])
        car.optUUID = uuid
        car.optURL = url
        car.optDecimal = decimal
        car.tags = ["red", "fast"]
    }

    static func expectFilled(_ car: MMCar) {
        #expect(car.name == "Model T")
        #expect(car.year == 1908)
        #expect(car.price == 825.5)
        #expect(car.int == 1 << 40)
        #expect(car.int16 == -16)
        #expect(car.int32 == 1 << 30)
        #expect(car.int64 == -(1 << 50))
        #expect(car.double == 2.5)
        #expect(car.float == 1.25)
        #expect(car.bool == true)
        #expect(car.string == "string")
        #expect(car.date == date)
        #expect(car.data == Data([1, 2, 3]))
        #expect(car.uuid == uuid)
        #expect(car.url == url)
        #expect(car.decimal == decimal)
        #expect(car.optInt == 7)
        #expect(car.optInt16 == 16)
        #expect(car.optInt32 == 32)
        #expect(car.optInt64 == 64)
        #expect(car.optDouble == 0.5)
        #expect(car.optFloat == 0.25)
        #expect(car.optBool == false)
        #expect(car.optString == "opt")
        #expect(car.optDate == date)
        #expect(car.optData == Data([9]))
        #expect(car.optUUID == uuid)
        #expect(car.optURL == url)
        #expect(car.optDecimal == decimal)
        #expect(car.tags == ["red", "fast"])
    }

    @Test("Typed writes read back through value(forKey:), and KVC writes through the typed getters")
    func typedAndKeyValueCodingAgree() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        context.performAndWait {
            let car = MMCar(context: context)
            Self.fill(car)
            Self.expectFilled(car)
            #expect(car.value(forKey: "name") as? String == "Model T")
            #expect((car.value(forKey: "year") as? NSNumber)?.int16Value == 1908)
            #expect((car.value(forKey: "int") as? NSNumber)?.int64Value == 1 << 40)
            #expect((car.value(forKey: "int16") as? NSNumber)?.int16Value == -16)
            #expect((car.value(forKey: "float") as? NSNumber)?.floatValue == 1.25)
            #expect((car.value(forKey: "bool") as? NSNumber)?.boolValue == true)
            #expect(car.value(forKey: "date") as? Date == Self.date)
            #expect(car.value(forKey: "data") as? Data == Data([1, 2, 3]))
            #expect(car.value(forKey: "uuid") as? UUID == Self.uuid)
            #expect(car.value(forKey: "url") as? URL == Self.url)
            #expect((car.value(forKey: "decimal") as? NSDecimalNumber)?.decimalValue == Self.decimal)
            #expect(car.value(forKey: "optBool") as? NSNumber == NSNumber(value: false))

            car.setValue("Model A", forKey: "name")
            car.setValue(NSNumber(value: 1927), forKey: "year")
            car.setValue(3.75, forKey: "price")
            car.setValue(NSNumber(value: 12), forKey: "optInt32")
            car.setValue(nil, forKey: "optString")
            car.setValue(["blue"], forKey: "tags")
            #expect(car.name == "Model A")
            #expect(car.year == 1927)
            #expect(car.price == 3.75)
            #expect(car.optInt32 == 12)
            #expect(car.optString == nil)
            #expect(car.tags == ["blue"])

            car.optString = "back"
            car.optInt32 = nil
            car.tags = nil
            #expect(car.value(forKey: "optString") as? String == "back")
            #expect(car.value(forKey: "optInt32") == nil)
            #expect(car.value(forKey: "tags") == nil)
        }
    }

    @Test("Non-optional properties read nil values as 0, false, \"\", empty data, the reference date, the zero UUID")
    func nonOptionalDefaults() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        context.performAndWait {
            let car = MMCar(context: context)
            #expect(car.int == 0 && car.int16 == 0 && car.int32 == 0 && car.int64 == 0 && car.year == 0)
            #expect(car.double == 0 && car.float == 0 && car.price == 0)
            #expect(car.bool == false)
            #expect(car.string == "")
            #expect(car.data == Data())
            #expect(car.date == Date(timeIntervalSinceReferenceDate: 0))
            #expect(car.uuid.uuidString == "00000000-0000-0000-0000-000000000000")
            #expect(car.decimal == 0)
            #expect(car.optInt == nil && car.optInt16 == nil && car.optBool == nil && car.optString == nil)
            #expect(car.optDate == nil && car.optData == nil && car.optUUID == nil && car.optURL == nil && car.optDecimal == nil)
            #expect(car.name == nil && car.owner == nil && car.passengers.isEmpty && car.stops?.count == 0 && car.tags == nil)
        }
    }

    @Test("Numbers set through KVC with another attribute type convert like NSNumber")
    func crossTypeReads() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        context.performAndWait {
            let car = MMCar(context: context)
            let person = MMPerson(context: context)
            person.age = 41
            #expect(person.age?.intValue == 41)
            person.age = nil
            #expect(person.age == nil)
            car.wideYear = 1999       // Int into Integer 16
            #expect(car.wideYear == 1999)
            #expect((car.value(forKey: "wideYear") as? NSNumber)?.intValue == 1999)
            car.setValue(NSNumber(value: 3), forKey: "optDouble")
            #expect(car.optDouble == 3)
        }
    }

    @Test("Typed setters are tracked: hasChanges, changedValues(), isUpdated")
    func changesAreTracked() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        try context.performAndWait {
            let car = MMCar(context: context)
            car.name = "Beetle"
            #expect(context.hasChanges && car.hasChanges && car.isInserted)
            try context.save()
            #expect(!context.hasChanges && !car.hasChanges)

            car.year = 1938
            car.optString = "changed"
            #expect(context.hasChanges)
            #expect(car.isUpdated)
            let changed = car.changedValues()
            #expect(Set(changed.keys) == ["year", "optString"])
            #expect((changed["year"] as? NSNumber)?.intValue == 1938)
            #expect(changed["optString"] as? String == "changed")
            #expect(context.updatedObjects.contains(car))

            let person = MMPerson(context: context)
            car.owner = person
            #expect(car.changedValues()["owner"] as? MMPerson === person)
            #expect(person.changedValues()["cars"] != nil)
        }
    }

    @Test("Relationship setters maintain inverses: to-one, many-to-many, ordered to-many")
    func inverseMaintenance() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        context.performAndWait {
            let car = MMCar(context: context)
            let other = MMCar(context: context)
            let alice = MMPerson(context: context)
            let bob = MMPerson(context: context)

            car.owner = alice
            #expect(alice.cars?.contains(car) == true)
            #expect(alice.value(forKey: "cars") as? Set<NSManagedObject> == [car])
            other.owner = alice
            #expect(alice.cars?.count == 2)
            car.owner = bob
            #expect(alice.cars == NSSet(array: [other]))
            #expect(bob.cars == NSSet(array: [car]))
            car.owner = nil
            #expect(bob.cars?.count == 0)

            // NSSet setter on the inverse side.
            bob.cars = NSSet(array: [car, other])
            #expect(car.owner === bob && other.owner === bob)
            #expect(alice.cars?.count == 0)

            // Many-to-many with Set<T> and [T].
            car.passengers = [alice, bob]
            #expect(alice.rides == [car])
            #expect(Set(bob.rides) == [car])
            bob.rides = [car, other]
            #expect(other.passengers == [bob])
            car.passengers = [alice]
            #expect(bob.rides == [other])
            #expect(car.value(forKey: "passengers") as? Set<NSManagedObject> == [alice])

            // Ordered to-many: order kept, inverse to-one set.
            car.stops = NSOrderedSet(array: [bob, alice])
            #expect(car.stops?.array as? [MMPerson] == [bob, alice])
            #expect(alice.stopCar === car && bob.stopCar === car)
            alice.stopCar = other
            #expect(car.stops?.array as? [MMPerson] == [bob])
            #expect(other.stops?.array as? [MMPerson] == [alice])
            car.stops = nil
            #expect(bob.stopCar == nil)
        }
    }

    @Test("Values survive save and a fetch in a new context")
    func saveAndRefetch() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        try context.performAndWait {
            let car = MMCar(context: context)
            Self.fill(car)
            let alice = MMPerson(context: context)
            alice.name = "Alice"
            alice.age = 30
            let bob = MMPerson(context: context)
            bob.name = "Bob"
            car.owner = alice
            car.passengers = [alice, bob]
            car.stops = NSOrderedSet(array: [bob, alice])
            try context.save()
        }

        let fresh = ManagedTestModel.sibling(of: context)
        try fresh.performAndWait {
            let cars = try fresh.fetch(MMCar.fetchRequest())
            #expect(cars.count == 1)
            let car = try #require(cars.first)
            #expect(car.isFault)
            Self.expectFilled(car)
            #expect(car.owner?.name == "Alice")
            #expect(car.owner?.age == 30)
            #expect(Set(car.passengers.map(\.name)) == ["Alice", "Bob"])
            #expect((car.stops?.array as? [MMPerson])?.map(\.name) == ["Bob", "Alice"])
            let alice = try #require(car.owner)
            #expect(alice.cars == NSSet(array: [car]))
            #expect(alice.rides == [car])
            #expect(alice.stopCar === car)

            // A typed change on a fetched object saves too.
            car.year = 1909
            car.optURL = nil
            try fresh.save()
        }

        let third = ManagedTestModel.sibling(of: context)
        try third.performAndWait {
            let request = NSFetchRequest<MMCar>(entityName: "Car")
            let car = try #require(try third.fetch(request).first)
            #expect(car.year == 1909)
            #expect(car.optURL == nil)
            #expect(car.value(forKey: "year") as? NSNumber == 1909)
        }
    }

    @Test("An integer out of the attribute's range is kept and fails validation at save")
    func outOfRangeInteger() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        try context.performAndWait {
            let car = MMCar(context: context)
            car.wideYear = 100_000     // Int into Integer 16
            car.int32 = .max          // in range
            car.optInt16 = .min       // in range
            #expect(car.value(forKey: "wideYear") as? Int == 100_000)
            let error = #expect(throws: NSError.self) { try context.save() }
            #expect(error?.code == NSManagedObjectValidationError)
            #expect(error?.userInfo[NSValidationKeyErrorKey] as? String == "wideYear")
            car.wideYear = 2000
            try context.save()
            #expect(!context.hasChanges)
        }
    }

    @Test("Implicitly unwrapped and NSNumber properties; typed fetch requests and Car(context:)")
    func typedClassSupport() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        try context.performAndWait {
            let person = MMPerson(context: context)
            person.name = "Zoe"
            let name: String = person.name
            #expect(name == "Zoe")
            person.name = nil
            #expect(person.name == nil)
            _ = MMCar(context: context)
            try context.save()

            // Apple's generated `fetchRequest()` next to the base class's untyped one.
            let typed: NSFetchRequest<MMCar> = MMCar.fetchRequest()
            #expect(try context.fetch(typed).count == 1)
            // A class without its own `fetchRequest()` inherits the untyped one.
            let untyped: NSFetchRequest<any NSFetchRequestResult> = MMPerson.fetchRequest()
            #expect(try context.fetch(untyped).count == 1)
            #expect(try context.count(for: NSFetchRequest<MMPerson>(entityName: "Person")) == 1)
            let people: [MMPerson] = try context.fetch(NSFetchRequest<MMPerson>(entityName: "Person"))
            #expect(people.first?.name == nil)
        }
    }

    @Test("Generic classes and hand-written accessors")
    func genericAndHandWritten() throws {
        let (context, url) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(url) }
        context.performAndWait {
            let entity = context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Car"]!
            let box = MMBox<Int>(entity: entity, insertInto: context)
            box.name = "boxed"
            box.year = 12
            #expect(box.name == "boxed" && box.year == 12)
            #expect(box.value(forKey: "name") as? String == "boxed")

            let car = MMCar(context: context)
            car.modelYear = 1955
            #expect(car.year == 1955 && car.modelYear == 1955)
        }
    }

    @Test("A sub-entity's objects read inherited properties, mixed with the parent's")
    func subEntities() throws {
        // Objects stay in the context (fetching sub-entities back is the context core's business).
        let (context, url) = try ManagedTestModel.context(model: ManagedTestModel.make(sportsCar: true))
        defer { ManagedTestModel.remove(url) }
        context.performAndWait {
            var objects: [NSManagedObject] = []
            for index in 0..<4 {
                let car = MMCar(context: context)
                car.name = "car \(index)"
                let sports = NSEntityDescription.insertNewObject(forEntityName: "SportsCar", into: context) as! MMSportsCar
                sports.name = "sports \(index)"   // declared by Car: index cached for Car, valid in SportsCar
                sports.topSpeed = Int32(200 + index)
                objects += [car, sports]
            }
            for _ in 0..<2 {
                for object in objects {
                    let name = (object as? MMCar)?.name ?? (object as? MMSportsCar)?.name
                    #expect(name != nil)
                    #expect(name == object.value(forKey: "name") as? String)
                }
            }
            let speeds = objects.compactMap { ($0 as? MMSportsCar)?.topSpeed }
            #expect(speeds == [200, 201, 202, 203])
            #expect(objects.compactMap { ($0 as? MMSportsCar)?.value(forKey: "topSpeed") as? NSNumber } == [200, 201, 202, 203])
        }
    }

    @Test("One class in two models with different property orders reads each model's values")
    func oneClassTwoModels() throws {
        let (first, firstURL) = try ManagedTestModel.context()
        defer { ManagedTestModel.remove(firstURL) }
        // A model whose Car has its properties in the reverse order: other indexes, same names.
        let reversed = ManagedTestModel.make()
        let car = reversed.entitiesByName["Car"]!
        car.properties = car.properties.reversed()
        let (second, secondURL) = try ManagedTestModel.context(model: reversed)
        defer { ManagedTestModel.remove(secondURL) }
        var objects: [(MMCar, NSManagedObjectContext)] = []
        first.performAndWait {
            let a = MMCar(context: first)
            a.name = "first"; a.year = 1
            objects.append((a, first))
        }
        second.performAndWait {
            let b = MMCar(context: second)
            b.name = "second"; b.year = 2
            objects.append((b, second))
        }
        for _ in 0..<3 {
            for (object, context) in objects {
                context.performAndWait {
                    #expect(object.name == object.value(forKey: "name") as? String)
                    #expect(Int(object.year) == (object.value(forKey: "year") as? NSNumber)?.intValue)
                }
            }
        }
    }

    @Test("Objects of one class in several contexts on several threads, with two models")
    func concurrentContexts() async throws {
        // Two models give the class two property layouts: the key caches flip between them
        // while eight threads read and write, and every read must still be right.
        let models = [ManagedTestModel.make(), ManagedTestModel.make()]
        let reversed = models[1].entitiesByName["Car"]!
        reversed.properties = reversed.properties.reversed()
        try await withThrowingTaskGroup(of: Int64.self) { group in
            for task in 0..<8 {
                let model = models[task % 2]
                group.addTask {
                    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
                    _ = try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
                    let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                    context.persistentStoreCoordinator = coordinator
                    return await context.perform {
                        var cars: [MMCar] = []
                        for index in 0..<500 {
                            let car = MMCar(context: context)
                            car.int64 = Int64(index)
                            car.name = "car \(index)"
                            car.year = Int16(index)
                            cars.append(car)
                        }
                        var sum: Int64 = 0
                        for _ in 0..<20 {
                            for car in cars {
                                sum += car.int64
                                if car.name != "car \(car.int64)" || Int64(car.year) != car.int64 { sum = -1_000_000_000 }
                            }
                        }
                        return sum
                    }
                }
            }
            for try await sum in group { #expect(sum == 20 * 499 * 500 / 2) }
        }
    }

    @Test("Int8 and Int128 properties read and write integer attributes, saved and fetched back")
    func otherSignedIntegers() throws {
        let entity = NSEntityDescription()
        entity.name = "Numbers"
        entity.managedObjectClassName = NSStringFromClass(MMOtherIntegers.self)
        entity.properties = [
            ManagedTestModel.attribute("int8", .integer16AttributeType), ManagedTestModel.attribute("optInt8", .integer16AttributeType),
            ManagedTestModel.attribute("int128", .integer64AttributeType), ManagedTestModel.attribute("optInt128", .integer64AttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let (context, url) = try ManagedTestModel.context(model: model)
        defer { ManagedTestModel.remove(url) }
        try context.performAndWait {
            let numbers = MMOtherIntegers(context: context)
            #expect(numbers.int8 == 0 && numbers.optInt8 == nil && numbers.int128 == 0 && numbers.optInt128 == nil)
            numbers.int8 = -100
            numbers.optInt8 = 7
            numbers.int128 = 1 << 40
            numbers.optInt128 = -3
            #expect(numbers.value(forKey: "int8") as? Int == -100)
            #expect(numbers.value(forKey: "int128") as? Int == 1 << 40)
            #expect(numbers.int8 == -100 && numbers.optInt8 == 7 && numbers.int128 == 1 << 40 && numbers.optInt128 == -3)
            numbers.optInt8 = nil
            // Past Int64: kept as given and refused at save, as an out-of-range value is (it trapped).
            numbers.int128 = Int128(Int64.max) + 1
            #expect(throws: NSError.self) { try context.save() }
            numbers.int128 = 1 << 40
            try context.save()

            let other = ManagedTestModel.sibling(of: context)
            try other.performAndWait {
                let fetched = try #require(try other.fetch(NSFetchRequest<MMOtherIntegers>(entityName: "Numbers")).first)
                #expect(fetched.int8 == -100 && fetched.optInt8 == nil && fetched.int128 == 1 << 40 && fetched.optInt128 == -3)
            }
        }
    }

    @Test("A client module compiles @Managed properties and hand-written accessors of every supported type")
    func clientCompilesEveryType() throws {
        for languageMode in ["6", "5"] {
            let result = try ClientCompiler.typecheck("""
                import Foundation
                import CoreData

                final class Part: NSManagedObject {
                    @Managed var int: Int
                    @Managed var int8: Int8
                    @Managed var int16: Int16
                    @Managed var int32: Int32
                    @Managed var int64: Int64
                    @Managed var double: Double
                    @Managed var float: Float
                    @Managed var bool: Bool
                    @Managed var string: String
                    @Managed var date: Date
                    @Managed var data: Data
                    @Managed var uuid: UUID
                    @Managed var url: URL
                    @Managed var decimal: Decimal
                    @Managed public var optInt: Int?
                    @Managed public var optInt16: Int16?
                    @Managed public var optDouble: Double?
                    @Managed public var optFloat: Float?
                    @Managed public var optBool: Bool?
                    @Managed public var optString: String?
                    @Managed public var name: String!
                    @Managed public var optDate: Date?
                    @Managed public var optData: Data?
                    @Managed public var optUUID: UUID?
                    @Managed public var optURL: URL?
                    @Managed public var optDecimal: Decimal?
                    @Managed var number: NSNumber?
                    @Managed var tags: [String]?
                    @Managed var owner: Part?
                    @Managed var parts: Set<Part>
                    @Managed var list: [Part]?
                    @Managed var set: NSSet?
                    @Managed var ordered: NSOrderedSet
                }

                extension Part {
                    private static let yearKey = ManagedPropertyKey("int16")
                    var year: Int {
                        get { Int(managedValue(for: Self.yearKey, as: Int16.self)) }
                        set { setManagedValue(Int16(newValue), for: Self.yearKey) }
                    }
                    func literals() {
                        setManagedValue(3, for: Self.yearKey)
                        setManagedValue(2.5, for: Self.yearKey)
                        setManagedValue(true, for: Self.yearKey)
                        setManagedValue("x", for: Self.yearKey)
                        setManagedValue(nil as Int16?, for: Self.yearKey)
                        let double: Double? = managedValue(for: Self.yearKey, as: Double?.self)
                        let data: Data = managedValue(for: Self.yearKey, as: Data.self)
                        _ = (double, data)
                    }
                }
                """, languageMode: languageMode)
            #expect(result.ok, "Swift \(languageMode): \(result.output)")
        }
    }

    @Test("A @Managed property that the entity lacks stops the process with a message")
    func unknownKeyStops() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let entity = NSEntityDescription()
            entity.name = "Stray"
            entity.properties = [ManagedTestModel.attribute("present", .stringAttributeType)]
            entity.managedObjectClassName = NSStringFromClass(MMStray.self)
            let model = NSManagedObjectModel()
            model.entities = [entity]
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            _ = try? coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            context.performAndWait {
                _ = MMStray(context: context).missing
            }
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("'missing'"))
        #expect(message.contains("class CoreDataTests.MMStray"))
        #expect(message.contains("entity 'Stray'"))
    }
}
