import Foundation
@testable import CoreData

/// The PostgreSQL tests' model: `Person` with an attribute of every stored type, `Car` (and its
/// sub-entity `SportsCar`) owned by a person, `Tag`s many-to-many with people (a tag's label is
/// unique), and `Pet`s in an ordered to-many.
enum PostgreSQLTestModel {
    static func make(personNameIndexed: Bool = false) -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let a = NSAttributeDescription()
            a.name = name
            a.attributeType = type
            return a
        }
        func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool, ordered: Bool = false) -> NSRelationshipDescription {
            let r = NSRelationshipDescription()
            r.name = name
            r.destinationEntity = destination
            r.maxCount = toMany ? 0 : 1
            r.isOrdered = ordered
            return r
        }
        func entity(_ name: String) -> NSEntityDescription {
            let e = NSEntityDescription()
            e.name = name
            return e
        }
        let person = entity("Person"), car = entity("Car"), sportsCar = entity("SportsCar"), tag = entity("Tag"), pet = entity("Pet")
        let cars = relationship("cars", car, toMany: true), owner = relationship("owner", person, toMany: false)
        cars.inverseRelationship = owner
        owner.inverseRelationship = cars
        let tags = relationship("tags", tag, toMany: true), people = relationship("people", person, toMany: true)
        tags.inverseRelationship = people
        people.inverseRelationship = tags
        let pets = relationship("pets", pet, toMany: true, ordered: true), keeper = relationship("keeper", person, toMany: false)
        pets.inverseRelationship = keeper
        keeper.inverseRelationship = pets
        let name = attribute("name", .stringAttributeType)
        name.isIndexed = personNameIndexed
        person.properties = [
            name, attribute("age", .integer16AttributeType), attribute("rank", .integer32AttributeType),
            attribute("big", .integer64AttributeType), attribute("score", .doubleAttributeType),
            attribute("weight", .floatAttributeType), attribute("balance", .decimalAttributeType),
            attribute("born", .dateAttributeType), attribute("photo", .binaryDataAttributeType),
            attribute("identifier", .UUIDAttributeType), attribute("homepage", .URIAttributeType),
            attribute("active", .booleanAttributeType), cars, tags, pets,
        ]
        car.properties = [attribute("name", .stringAttributeType), owner]
        sportsCar.properties = [attribute("topSpeed", .integer64AttributeType)]
        car.subentities = [sportsCar]
        tag.properties = [attribute("label", .stringAttributeType), people]
        tag.uniquenessConstraints = [["label"]]
        pet.properties = [attribute("name", .stringAttributeType), keeper]
        let model = NSManagedObjectModel()
        model.entities = [person, car, sportsCar, tag, pet]
        return model
    }
}

extension NSManagedObjectContext {
    /// A new object of `entity` with `values`.
    @discardableResult
    func insert(_ entity: String, _ values: [String: Any] = [:]) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: self)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    /// The objects of `entity` matching `format`, sorted by `sort` (ascending).
    func objects(_ entity: String, _ format: String? = nil, _ arguments: [Any] = [], sortedBy sort: String? = nil) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        if let format { request.predicate = NSPredicate(format: format, argumentArray: arguments) }
        if let sort { request.sortDescriptors = [NSSortDescriptor(key: sort, ascending: true)] }
        return try fetch(request)
    }
}
