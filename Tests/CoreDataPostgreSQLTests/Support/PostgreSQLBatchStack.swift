import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The model of the SQLite store's batch tests (`CoreDataTests`' `TestModel`), so that the
/// PostgreSQL batch tests check the same cases against the same expectations: `Person` (a
/// required name; `cars` cascades), `Car` (every attribute type; `year` defaults to 2000),
/// `Tag`s many-to-many with cars, `Playlist`/`Song` (ordered, nullify), `Garage` whose `vehicles`
/// deny, and the abstract `Vehicle` with `Truck` and `Bike`.
enum PostgreSQLBatchModel {
    static func make() -> NSManagedObjectModel {
        func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true, defaultValue: Any? = nil) -> NSAttributeDescription {
            let a = NSAttributeDescription()
            a.name = name
            a.attributeType = type
            a.isOptional = optional
            a.defaultValue = defaultValue
            return a
        }
        func relationship(_ name: String, to: NSEntityDescription, toMany: Bool, rule: NSDeleteRule = .nullifyDeleteRule,
                          ordered: Bool = false) -> NSRelationshipDescription {
            let r = NSRelationshipDescription()
            r.name = name
            r.destinationEntity = to
            r.maxCount = toMany ? 0 : 1
            r.deleteRule = rule
            r.isOrdered = ordered
            return r
        }
        func entity(_ name: String) -> NSEntityDescription {
            let e = NSEntityDescription()
            e.name = name
            return e
        }
        let person = entity("Person"), car = entity("Car"), tag = entity("Tag"), playlist = entity("Playlist"), song = entity("Song")
        let vehicle = entity("Vehicle"), truck = entity("Truck"), bike = entity("Bike"), garage = entity("Garage")
        vehicle.isAbstract = true
        let cars = relationship("cars", to: car, toMany: true, rule: .cascadeDeleteRule)
        let owner = relationship("owner", to: person, toMany: false)
        cars.inverseRelationship = owner; owner.inverseRelationship = cars
        let tags = relationship("tags", to: tag, toMany: true)
        let tagged = relationship("cars", to: car, toMany: true)
        tags.inverseRelationship = tagged; tagged.inverseRelationship = tags
        let songs = relationship("songs", to: song, toMany: true, ordered: true)
        let list = relationship("playlist", to: playlist, toMany: false)
        songs.inverseRelationship = list; list.inverseRelationship = songs
        let vehicles = relationship("vehicles", to: vehicle, toMany: true, rule: .denyDeleteRule)
        let garageOf = relationship("garage", to: garage, toMany: false)
        vehicles.inverseRelationship = garageOf; garageOf.inverseRelationship = vehicles
        person.properties = [attribute("name", .stringAttributeType, optional: false), attribute("age", .integer16AttributeType, defaultValue: 0), cars]
        car.properties = [attribute("name", .stringAttributeType), attribute("year", .integer32AttributeType, defaultValue: 2000),
                          attribute("price", .doubleAttributeType), attribute("built", .dateAttributeType),
                          attribute("vin", .UUIDAttributeType), attribute("photo", .binaryDataAttributeType),
                          attribute("electric", .booleanAttributeType, defaultValue: false),
                          attribute("site", .URIAttributeType), attribute("cost", .decimalAttributeType), owner, tags]
        tag.properties = [attribute("label", .stringAttributeType), tagged]
        playlist.properties = [attribute("title", .stringAttributeType), songs]
        song.properties = [attribute("title", .stringAttributeType), list]
        vehicle.properties = [attribute("wheels", .integer16AttributeType, defaultValue: 4), garageOf]
        truck.properties = [attribute("load", .doubleAttributeType)]
        bike.properties = [attribute("load", .integer16AttributeType)]
        vehicle.subentities = [truck, bike]
        garage.properties = [attribute("city", .stringAttributeType), vehicles]
        let model = NSManagedObjectModel()
        model.entities = [person, car, tag, playlist, song, vehicle, truck, bike, garage]
        return model
    }

    /// The model with a uniqueness constraint on `Tag.label`.
    static func constrained() -> NSManagedObjectModel {
        let model = make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        return model
    }
}

/// A PostgreSQL store in a database of its own, with a confinement context, as the SQLite batch
/// tests' `TestStack`.
final class PostgreSQLBatchStack {
    let database: TemporaryDatabase
    let model: NSManagedObjectModel
    let coordinator: NSPersistentStoreCoordinator
    let context: NSManagedObjectContext

    init(model: NSManagedObjectModel = PostgreSQLBatchModel.make(), options: [AnyHashable: Any]? = nil) throws {
        database = try TemporaryDatabase()
        self.model = model
        coordinator = try database.coordinator(model, options: options)
        context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    func newContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    @discardableResult
    func insert(_ entity: String, _ values: [String: Any] = [:]) -> NSManagedObject { context.insert(entity, values) }

    func fetch(_ entity: String, _ configure: (NSFetchRequest<NSManagedObject>) -> Void = { _ in }) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        configure(request)
        return try context.fetch(request)
    }

    /// The rows of `sql` on the database, `NULL` as "NULL" (as the SQLite tests' `rows`).
    func rows(_ sql: String) throws -> [[String]] {
        try database.query(sql).map { $0.map { $0 ?? "NULL" } }
    }

    /// A coordinator of the same store, read-only.
    func readOnlyContext() throws -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(model, options: [NSReadOnlyPersistentStoreOption: true])
        return context
    }
}
