import CoreData
import Foundation
import TestSupport

/// The classes of the test model. `Employer` is the class of the entity `Company`, whose name
/// differs from the class's.
final class Person: NSManagedObject {}
final class Address: NSManagedObject {}
final class Employer: NSManagedObject {}
final class Automobile: NSManagedObject {}

/// A model built in code with MagicalRecord's import user info:
/// - `Person`: `personID` (Integer 64, the default primary attribute), `name`, `age` (Integer 16),
///   `birthday` (Date, `dateFormat` `yyyy-MM-dd`), `nickname` (`mappedKeyName` `profile.nick`,
///   `mappedKeyName.1` `nick`), `active` (Boolean), `score` (Double), `addresses` (to-many
///   `Address`, `mappedKeyName` `homes`, `relatedByAttribute` `street`), `employer` (to-one
///   `Company`, `mappedKeyName` `company`);
/// - `Address`: `street`, `city`, `person`;
/// - `Company` (class `Employer`): `companyID` (`mappedKeyName` `id`, `mappedKeyName.1` `company_id`), `name`, `founded` (Date, the
///   default format), `employees`;
/// - `Automobile`: `make`, `model`, `price` (Double), `year` (Integer 32).
enum MagicalTestModel {
    static func make() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, _ userInfo: [String: String] = [:]) -> NSAttributeDescription {
            let a = NSAttributeDescription()
            a.name = name
            a.attributeType = type
            a.isOptional = true
            a.userInfo = userInfo
            return a
        }
        func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool,
                          _ userInfo: [String: String] = [:]) -> NSRelationshipDescription {
            let r = NSRelationshipDescription()
            r.name = name
            r.destinationEntity = destination
            r.maxCount = toMany ? 0 : 1
            r.deleteRule = .nullifyDeleteRule
            r.userInfo = userInfo
            return r
        }
        func entity(_ name: String, _ objectClass: NSManagedObject.Type) -> NSEntityDescription {
            let e = NSEntityDescription()
            e.name = name
            e.managedObjectClassName = String(reflecting: objectClass)
            return e
        }
        let person = entity("Person", Person.self)
        let address = entity("Address", Address.self)
        let company = entity("Company", Employer.self)
        let car = entity("Automobile", Automobile.self)

        let addresses = relationship("addresses", address, toMany: true, ["mappedKeyName": "homes", "relatedByAttribute": "street"])
        let resident = relationship("person", person, toMany: false)
        addresses.inverseRelationship = resident; resident.inverseRelationship = addresses
        let employer = relationship("employer", company, toMany: false, ["mappedKeyName": "company"])
        let employees = relationship("employees", person, toMany: true)
        employer.inverseRelationship = employees; employees.inverseRelationship = employer

        person.properties = [attribute("personID", .integer64AttributeType), attribute("name", .stringAttributeType),
                             attribute("age", .integer16AttributeType),
                             attribute("birthday", .dateAttributeType, ["dateFormat": "yyyy-MM-dd"]),
                             attribute("nickname", .stringAttributeType, ["mappedKeyName": "profile.nick", "mappedKeyName.1": "nick"]),
                             attribute("active", .booleanAttributeType), attribute("score", .doubleAttributeType),
                             addresses, employer]
        address.properties = [attribute("street", .stringAttributeType), attribute("city", .stringAttributeType), resident]
        company.properties = [attribute("companyID", .integer64AttributeType, ["mappedKeyName": "id", "mappedKeyName.1": "company_id"]),
                              attribute("name", .stringAttributeType), attribute("founded", .dateAttributeType), employees]
        car.properties = [attribute("make", .stringAttributeType), attribute("model", .stringAttributeType),
                          attribute("price", .doubleAttributeType), attribute("year", .integer32AttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [person, address, company, car]
        return model
    }
}

/// A coordinator with a SQLite store in a temporary folder, and a private-queue context on it.
final class MagicalTestStack {
    let folder: TemporaryFolder
    let coordinator: NSPersistentStoreCoordinator
    let context: NSManagedObjectContext

    init(model: NSManagedObjectModel = MagicalTestModel.make()) throws {
        folder = try TemporaryFolder()
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil,
                                           at: folder.url.appendingPathComponent("Test.sqlite"), options: nil)
        context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    /// Another private-queue context on the coordinator.
    func newContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Runs `body` on the context's queue.
    func run<T>(_ body: () throws -> T) rethrows -> T {
        try context.performAndWait(body)
    }

    /// Inserts an object of `entity` with `values`, on the context's queue.
    @discardableResult
    func insert(_ entity: String, _ values: [String: Any]) -> NSManagedObject {
        run {
            let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
            for (key, value) in values { object.setValue(value, forKey: key) }
            return object
        }
    }

    func save() throws {
        try run { try context.save() }
    }

    /// Four cars: two Saabs (1999: 3000, 2004: 9000), a Volvo (2004: 6000), a Fiat (1980: 1000).
    func insertCars() {
        insert("Automobile", ["make": "Saab", "model": "900", "price": 3000.0, "year": 1999])
        insert("Automobile", ["make": "Saab", "model": "9-3", "price": 9000.0, "year": 2004])
        insert("Automobile", ["make": "Volvo", "model": "V70", "price": 6000.0, "year": 2004])
        insert("Automobile", ["make": "Fiat", "model": "Panda", "price": 1000.0, "year": 1980])
    }

    /// The values of `key` of `objects`, read on the context's queue.
    func values(_ objects: [NSManagedObject]?, _ key: String) -> [String] {
        run { (objects ?? []).map { "\($0.value(forKey: key) ?? "nil")" } }
    }
}
