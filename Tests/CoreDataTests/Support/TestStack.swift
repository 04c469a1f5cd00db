import CSQLite
import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A model built in code, the way Apple's documentation builds one: people own cars (one-to-many,
/// nullify / cascade), cars have tags (many-to-many), playlists have ordered songs, vehicles
/// have sub-entities.
enum TestModel {
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
                          ordered: Bool = false, optional: Bool = true) -> NSRelationshipDescription {
            let r = NSRelationshipDescription()
            r.name = name
            r.destinationEntity = to
            r.maxCount = toMany ? 0 : 1
            r.deleteRule = rule
            r.isOrdered = ordered
            r.isOptional = optional
            return r
        }
        let person = NSEntityDescription(); person.name = "Person"
        let car = NSEntityDescription(); car.name = "Car"
        let tag = NSEntityDescription(); tag.name = "Tag"
        let playlist = NSEntityDescription(); playlist.name = "Playlist"
        let song = NSEntityDescription(); song.name = "Song"
        let vehicle = NSEntityDescription(); vehicle.name = "Vehicle"; vehicle.isAbstract = true
        let truck = NSEntityDescription(); truck.name = "Truck"
        let bike = NSEntityDescription(); bike.name = "Bike"
        let garage = NSEntityDescription(); garage.name = "Garage"

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

        let name = attribute("name", .stringAttributeType, optional: false)
        name.maximum = 40
        person.properties = [name, attribute("age", .integer16AttributeType, defaultValue: 0), cars]
        let carName = attribute("name", .stringAttributeType)
        let year = attribute("year", .integer32AttributeType, defaultValue: 2000)
        year.minimum = 1886
        year.maximum = 2100
        car.properties = [carName, year, attribute("price", .doubleAttributeType), attribute("built", .dateAttributeType),
                          attribute("vin", .UUIDAttributeType), attribute("photo", .binaryDataAttributeType),
                          attribute("electric", .booleanAttributeType, defaultValue: false),
                          attribute("site", .URIAttributeType), attribute("cost", .decimalAttributeType),
                          attribute("extras", .transformableAttributeType),
                          attribute("scratch", .stringAttributeType).transient(), owner, tags]
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
}

extension TestModel {
    /// ``make()`` with two configurations: "Music" (playlists, songs) and "Garage" (vehicles and
    /// garages), for coordinators with a store of each.
    static func makeWithConfigurations() -> NSManagedObjectModel {
        let model = make()
        let byName = model.entitiesByName
        model.setEntities([byName["Playlist"]!, byName["Song"]!], forConfigurationName: "Music")
        model.setEntities([byName["Vehicle"]!, byName["Truck"]!, byName["Bike"]!, byName["Garage"]!], forConfigurationName: "Garage")
        return model
    }
}

extension NSAttributeDescription {
    func transient() -> NSAttributeDescription { isTransient = true; return self }
}

/// A coordinator and context on a fresh SQLite file (or in memory, or a PostgreSQL database:
/// ``TestStoreKind``) for one test.
final class TestStack {
    let directory: URL
    /// The SQLite file's URL, or the PostgreSQL database's.
    let url: URL
    let model: NSManagedObjectModel
    let coordinator: NSPersistentStoreCoordinator
    let context: NSManagedObjectContext
    /// The folder made for this stack (none when the caller gave one), removed with the stack.
    private let folder: TemporaryFolder?
    /// The PostgreSQL database of a stack on one, dropped with the last stack using it.
    let database: PostgreSQLTestDatabase?

    init(model: NSManagedObjectModel = TestModel.make(), inMemory: Bool = false, directory: URL? = nil,
         options: [AnyHashable: Any]? = nil, database: PostgreSQLTestDatabase? = nil) throws {
        folder = directory == nil ? try TemporaryFolder() : nil
        self.directory = directory ?? folder!.url
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        self.url = database?.url ?? self.directory.appendingPathComponent("Test.sqlite")
        self.model = model
        self.database = database
        coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let type = database != nil ? NSPostgreSQLStoreType : inMemory ? NSInMemoryStoreType : NSSQLiteStoreType
        try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: inMemory ? nil : url, options: options)
        context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
    }

    /// A stack on a new store of `kind`.
    convenience init(_ kind: TestStoreKind, model: NSManagedObjectModel = TestModel.make()) throws {
        try self.init(model: model, database: kind == .postgreSQL ? try PostgreSQLTestDatabase() : nil)
    }

    /// The store's type (``NSSQLiteStoreType``, ``NSPostgreSQLStoreType``, …).
    var storeType: String { coordinator.persistentStores[0].type }

    /// Rows of `sql` read from the store outside Core Data (quote names, `"ZCAR"`, to read both kinds).
    func rawRows(_ sql: String) throws -> [[String?]] {
        try database?.query(sql) ?? RawSQLite.query(url.path, sql)
    }

    /// The names of the cars in the store, read outside Core Data, sorted (`"?"` for none).
    func storedCarNames() throws -> [String] {
        try rawRows("SELECT \"ZNAME\" FROM \"ZCAR\"").map { $0[0] ?? "?" }.sorted()
    }

    /// A stack of ``TestModel`` whose entities named in `classes` have those classes.
    convenience init(classes: [String: NSManagedObject.Type]) throws {
        let model = TestModel.make()
        for (entity, objectClass) in classes { model.entitiesByName[entity]!.managedObjectClassName = String(reflecting: objectClass) }
        try self.init(model: model)
    }

    /// A second, independent stack on the same file or database (another "process").
    func reopen() throws -> TestStack { try TestStack(model: model, directory: directory, database: database) }

    /// The SQLite store removed, `sql` run on its file outside Core Data (as another tool would
    /// write it), and a new stack on the file. Keep this stack alive while using that one: it
    /// owns the folder.
    func rewritten(by sql: String) throws -> TestStack {
        try coordinator.remove(coordinator.persistentStores[0])
        try RawSQLite.execute(url.path, sql)
        return try reopen()
    }

    func newContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// A private-queue context on the coordinator, and a private-queue child of it.
    func parentAndChild() -> (parent: NSManagedObjectContext, child: NSManagedObjectContext) {
        let parent = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        parent.persistentStoreCoordinator = coordinator
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        return (parent, child)
    }

    @discardableResult
    func insert(_ entity: String, _ values: [String: Any] = [:]) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    func fetch(_ entity: String, _ configure: (NSFetchRequest<NSManagedObject>) -> Void = { _ in }) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        configure(request)
        return try context.fetch(request)
    }

}

/// Reads a SQLite file with the C API, independently of the store.
enum RawSQLite {
    static func query(_ path: String, _ sql: String) throws -> [[String?]] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK else {
            throw NSError(domain: "RawSQLite", code: 1, userInfo: [NSLocalizedDescriptionKey: String(cString: sqlite3_errmsg(db))])
        }
        defer { sqlite3_finalize(stmt) }
        var rows: [[String?]] = []
        while sqlite3_step(stmt) == SQLITE_ROW {
            var row: [String?] = []
            for column in 0..<sqlite3_column_count(stmt) {
                row.append(sqlite3_column_text(stmt, column).map { String(cString: $0) })
            }
            rows.append(row)
        }
        return rows
    }

    static func execute(_ path: String, _ sql: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
        defer { sqlite3_close(db) }
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw NSError(domain: "RawSQLite", code: 1, userInfo: [NSLocalizedDescriptionKey: String(cString: sqlite3_errmsg(db))])
        }
    }
}

extension TestStack {
    /// The rows `sql` reads from the store's file, read with the SQLite C API; NULL as `"NULL"`.
    func rows(_ sql: String) throws -> [[String]] {
        try RawSQLite.query(url.path, sql).map { $0.map { $0 ?? "NULL" } }
    }

    /// Makes the store's file refuse (abort) the insert of a `Car` named `name`: a trigger, as a
    /// failing store would, inside the save's transaction.
    func refuseCars(named name: String) throws {
        try RawSQLite.execute(url.path, """
            CREATE TRIGGER refuse BEFORE INSERT ON ZCAR WHEN NEW.ZNAME = '\(name)'
            BEGIN SELECT RAISE(ABORT, 'refused'); END
            """)
    }
}
