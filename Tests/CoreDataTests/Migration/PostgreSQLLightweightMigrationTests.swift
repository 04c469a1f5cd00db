import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL
import TestSupport

/// Lightweight migration of a PostgreSQL store (`PostgreSQLStore+Migration.swift`): the cases of
/// `SQLiteLightweightMigrationTests` and `AutomaticMigrationTests` on a database of the test
/// server. Needs a server (`COREDATA_POSTGRES_URL`, docs/POSTGRESQL.md); skips without one.
@Suite("Lightweight migration of a PostgreSQL store", PostgreSQLTestDatabase.skipUnlessServer())
struct PostgreSQLLightweightMigrationTests {
    typealias M = MigrationModels
    typealias S = SQLiteLightweightMigrationTests

    /// A store of `model` in a new database, with `fill` run on a context and saved.
    static func makeStore(_ model: NSManagedObjectModel, _ fill: (NSManagedObjectContext) throws -> Void) throws -> MigrationTestDatabase {
        let database = try MigrationTestDatabase()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: database.url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try fill(context)
        try context.save()
        try coordinator.remove(store)
        return database
    }

    /// Migrates the store from `source` to `destination` in one transaction, as opening it with
    /// the options does once the source model is found.
    static func migrate(_ database: MigrationTestDatabase, from source: NSManagedObjectModel, to destination: NSManagedObjectModel) throws {
        let connection = try LibPQConnection(url: database.url, password: nil)
        defer { connection.close() }
        try connection.transaction {
            let metadata = try PostgreSQLStore.readMetadata(connection, location: "")
            try PostgreSQLStore.migrate(on: connection, from: source, to: destination, metadata: metadata)
        }
    }

    /// A context on the store opened with `model` (and `options`).
    static func open(_ database: MigrationTestDatabase, _ model: NSManagedObjectModel,
                     options: [AnyHashable: Any]? = nil) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: database.url, options: options)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// The database's layout: each table's columns (name and type, in any order), its indexes,
    /// and `Z_PRIMARYKEY`'s entities.
    static func layout(_ database: MigrationTestDatabase) throws -> S.Layout {
        var layout = S.Layout()
        for row in try database.query("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()") {
            layout.tables[row[0]!, default: []].insert("\(row[1]!) \(row[2]!)")
        }
        layout.indexes = Set(try database.query("SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema()").map { $0[0]! })
        layout.entities = try database.query("SELECT \"Z_ENT\", \"Z_NAME\", \"Z_SUPER\" FROM \"Z_PRIMARYKEY\" ORDER BY \"Z_ENT\"").map { $0.map { $0 ?? "" } }
        return layout
    }

    /// The layout of a new store of `model`.
    static func freshLayout(_ model: NSManagedObjectModel) throws -> S.Layout {
        try layout(makeStore(model) { _ in })
    }

    /// Everything in the database: its layout, every table's rows (in order) and the metadata.
    static func contents(_ database: MigrationTestDatabase) throws -> [String] {
        let layout = try layout(database)
        var contents = layout.tables.map { "\($0.key): \($0.value.sorted())" }.sorted() + layout.indexes.sorted()
        for table in layout.tables.keys.sorted() {
            contents += try database.query("SELECT t::text FROM \"\(table)\" t ORDER BY 1").map { "\(table) \($0[0] ?? "")" }
        }
        return contents
    }

    /// Version 1 with its rows (``SQLiteLightweightMigrationTests/fillV1(_:)``).
    static func v1Store(_ model: NSManagedObjectModel = M.v1()) throws -> MigrationTestDatabase {
        try makeStore(model, S.fillV1)
    }

    /// A store of version 1 migrated to version 1 as `change` changes it, its layout checked
    /// against a new store's of that model; a context on it.
    static func migratedV1Store(_ change: (NSManagedObjectModel) -> Void) throws -> (MigrationTestDatabase, NSManagedObjectContext) {
        func v2() -> NSManagedObjectModel {
            let model = M.v1()
            change(model)
            return model
        }
        let database = try v1Store()
        try migrate(database, from: M.v1(), to: v2())
        #expect(try layout(database) == freshLayout(v2()))
        return (database, try open(database, v2()))
    }

    /// The error of migrating a version 1 store to `destination`, and whether the database is
    /// exactly as it was.
    static func refusal(_ destination: NSManagedObjectModel) throws -> (error: NSError?, untouched: Bool) {
        let database = try v1Store()
        let before = try contents(database)
        let error = S.error { try migrate(database, from: M.v1(), to: destination) }
        return (error, try contents(database) == before)
    }

    // MARK: What changes

    @Test func addedAttributesAreAddedColumnsFilledWithTheirDefaultInPlace() throws {
        let database = try Self.v1Store()
        let table = try database.query("SELECT to_regclass('\"ZPERSON\"')::oid")
        func v2() -> NSManagedObjectModel {
            let model = M.v1()
            model.entitiesByName["Person"]!.properties += [M.attribute("email", .stringAttributeType),
                                                            M.attribute("score", .integer32AttributeType, optional: false, defaultValue: 7)]
            return model
        }
        try Self.migrate(database, from: M.v1(), to: v2())
        #expect(try Self.layout(database) == Self.freshLayout(v2()))
        // ALTER TABLE in place: the same table, no copy.
        #expect(try database.query("SELECT to_regclass('\"ZPERSON\"')::oid") == table)
        let context = try Self.open(database, v2())
        let people = try S.fetch("Person", context)
        #expect(people.map { $0.value(forKey: "score") as? Int } == [7, 7])
        #expect(people.map { $0.value(forKey: "email") as? String } == [nil, nil])
        #expect(people.map { $0.value(forKey: "name") as? String } == ["Ann", nil])
        #expect(people.map { $0.objectID.primaryKey } == [1, 2])
        #expect((people[0].value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
    }

    /// A Double made a Decimal keeps the double's shortest exact digits, as on SQLite (a direct
    /// cast kept 15: 1234567.8901234567 became 1234567.89012346).
    @Test func aDoubleMadeADecimalKeepsItsDigits() throws {
        func model(_ type: NSAttributeType) -> NSManagedObjectModel {
            M.model([M.entity("Account", [M.attribute("name", .stringAttributeType), M.attribute("amount", type)])])
        }
        let database = try Self.makeStore(model(.doubleAttributeType)) { context in
            for (name, amount) in [("a", 1234567.8901234567), ("b", 0.1 + 0.2)] {
                _ = S.insert("Account", ["name": name, "amount": amount], into: context)
            }
        }
        try Self.migrate(database, from: model(.doubleAttributeType), to: model(.decimalAttributeType))
        let accounts = try S.fetch("Account", try Self.open(database, model(.decimalAttributeType)))
        #expect(accounts.map { ($0.value(forKey: "amount") as? NSDecimalNumber)?.stringValue } == ["1234567.8901234567", "0.30000000000000004"])
    }

    @Test func aRemovedAttributeLosesItsColumn() throws {
        let (database, context) = try Self.migratedV1Store { model in
            let car = model.entitiesByName["Car"]!
            car.properties = car.properties.filter { $0.name != "year" }
        }
        #expect(try database.query("SELECT count(*) FROM information_schema.columns WHERE column_name = 'ZYEAR'") == [["0"]])
        #expect(try S.fetch("Car", context).map { $0.value(forKey: "model") as? String } == ["A", "B"])
    }

    @Test func aRenamedAttributeIsRenamedInPlaceAndMadeNonOptionalGetsItsDefault() throws {
        let database = try Self.v1Store()
        let table = try database.query("SELECT to_regclass('\"ZPERSON\"')::oid")
        let v2 = M.v1(personName: M.attribute("fullName", .stringAttributeType, optional: false, defaultValue: "?", renamedFrom: "name"))
        try Self.migrate(database, from: M.v1(), to: v2)
        #expect(try Self.layout(database) == Self.freshLayout(M.v1(personName: M.attribute("fullName", .stringAttributeType, optional: false, defaultValue: "?"))))
        #expect(try database.query("SELECT to_regclass('\"ZPERSON\"')::oid") == table)
        #expect(try S.fetch("Person", Self.open(database, v2)).map { $0.value(forKey: "fullName") as? String } == ["Ann", "?"])
    }

    @Test func aNonOptionalPropertyLeftWithoutValueIsRefusedAndTheDatabaseUntouched() throws {
        let v2 = M.v1()
        v2.entitiesByName["Car"]!.properties += [M.attribute("vin", .stringAttributeType, optional: false)]
        let (error, untouched) = try Self.refusal(v2)
        #expect(error?.code == NSMigrationError && error?.localizedDescription.contains("Car.vin") == true)
        #expect(untouched)
        let v3 = M.v1()
        M.relate(v3.entitiesByName["Note"]!, "author", toMany: false, v3.entitiesByName["Person"]!, "notes", inverseToMany: true)
        v3.entitiesByName["Note"]!.relationshipsByName["author"]!.isOptional = false
        let refused = try Self.refusal(v3)
        #expect(refused.error?.code == NSMigrationError && refused.error?.localizedDescription.contains("Note.author") == true)
        #expect(refused.untouched)
    }

    @Test func addedAndRemovedEntitiesWithRenumberingKeepRowsKeysAndRelationships() throws {
        // Note removed; Aardvark (numbered first) and Tag added: every Z_ENT changes.
        func v2() -> NSManagedObjectModel {
            let model = M.v1WithTags()
            let byName = model.entitiesByName
            model.entities = [M.entity("Aardvark", [M.attribute("x", .integer16AttributeType)]), byName["Car"]!, byName["Person"]!, byName["Tag"]!]
            return model
        }
        let database = try Self.v1Store()
        try Self.migrate(database, from: M.v1(), to: v2())
        #expect(try Self.layout(database) == Self.freshLayout(v2()))
        let context = try Self.open(database, v2())
        let people = try S.fetch("Person", context)
        #expect(people.map { $0.objectID.primaryKey } == [1, 2])
        let cars = try #require(people.first?.value(forKey: "cars") as? Set<NSManagedObject>)
        #expect(Set(cars.compactMap { $0.value(forKey: "model") as? String }) == ["A", "B"])
        let tag = S.insert("Tag", ["label": "x"], into: context)
        tag.setValue(Set<NSManagedObject>([people[0]]), forKey: "people")
        let third = S.insert("Person", ["name": "Cy"], into: context)
        try context.save()
        // Above every key the store took before the migration: its block was 1–100.
        #expect(third.objectID.primaryKey == 101)
        let reopened = try Self.open(database, v2())
        let ann = try S.fetch("Person", reopened).first { $0.value(forKey: "name") as? String == "Ann" }
        #expect((ann?.value(forKey: "tags") as? Set<NSManagedObject>)?.count == 1)
    }

    @Test(arguments: ["Aardvark", "Zebra"])
    func aJoinTableIsKeptThroughRenumbering(_ added: String) throws {
        func model(extra: Bool) -> NSManagedObjectModel {
            let model = M.v1WithTags()
            if extra { model.entities = model.entities + [M.entity(added, [])] }
            return model
        }
        let database = try Self.makeStore(model(extra: false)) { context in
            let ann = S.insert("Person", ["name": "Ann"], into: context)
            ann.setValue(Set([S.insert("Tag", ["label": "red"], into: context), S.insert("Tag", ["label": "blue"], into: context)]), forKey: "tags")
        }
        try Self.migrate(database, from: model(extra: false), to: model(extra: true))
        #expect(try Self.layout(database) == Self.freshLayout(model(extra: true)))
        let context = try Self.open(database, model(extra: true))
        let ann = try #require(try S.fetch("Person", context).first)
        let labels = (ann.value(forKey: "tags") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "label") as? String }
        #expect(Set(labels ?? []) == ["red", "blue"])
    }

    @Test func anEntityMovedUnderANewParentMovesItsRows() throws {
        let (database, context) = try Self.migratedV1Store { model in
            let thing = M.entity("Thing", [M.attribute("created", .dateAttributeType)])
            thing.subentities = [model.entitiesByName["Note"]!]
            model.entities = model.entities + [thing]
        }
        #expect(try S.fetch("Note", context).map { $0.value(forKey: "text") as? String } == ["hello"])
        let thing = S.insert("Thing", [:], into: context)
        try context.save()
        #expect(thing.objectID.primaryKey == 2)
        withExtendedLifetime(database) {}
    }

    @Test func relationshipChangesKeepTheirMembers() throws {
        // A to-one added (a column with its index), then a to-many made ordered.
        let (databaseadded, added) = try Self.migratedV1Store { model in
            M.relate(model.entitiesByName["Note"]!, "author", toMany: false, model.entitiesByName["Person"]!, "notes", inverseToMany: true)
        }
        let note = try #require(try S.fetch("Note", added).first)
        note.setValue(try S.fetch("Person", added).first, forKey: "author")
        try added.save()
        let (databaseordered, ordered) = try Self.migratedV1Store { $0.entitiesByName["Person"]!.relationshipsByName["cars"]!.isOrdered = true }
        let cars = try #require(try S.fetch("Person", ordered).first?.value(forKey: "cars") as? NSOrderedSet)
        #expect(cars.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "model") as? String } == ["A", "B"])
        // One-to-many made many-to-many: the join table is filled.
        let (databasemany, many) = try Self.migratedV1Store { $0.entitiesByName["Car"]!.relationshipsByName["owner"]!.maxCount = 0 }
        let ann = try #require(try S.fetch("Person", many).first)
        let owned = try #require(ann.value(forKey: "cars") as? Set<NSManagedObject>)
        #expect(Set(owned.compactMap { $0.value(forKey: "model") as? String }) == ["A", "B"])
        // One-to-many made one-to-one: the lowest key stays.
        let (databaseone, one) = try Self.migratedV1Store { $0.entitiesByName["Person"]!.relationshipsByName["cars"]!.maxCount = 1 }
        #expect((try S.fetch("Person", one)[0].value(forKey: "cars") as? NSManagedObject)?.value(forKey: "model") as? String == "A")
        // Removed.
        let (databaseremoved, removed) = try Self.migratedV1Store { model in
            let byName = model.entitiesByName
            byName["Person"]!.properties = byName["Person"]!.properties.filter { $0.name != "cars" }
            byName["Car"]!.properties = byName["Car"]!.properties.filter { $0.name != "owner" }
        }
        #expect(try S.fetch("Car", removed).count == 2)
        withExtendedLifetime([databaseadded, databaseordered, databasemany, databaseone, databaseremoved]) {}
    }

    @Test func aManyToManyMadeOneToManyKeepsAnOwner() throws {
        func v2() -> NSManagedObjectModel {
            let model = M.v1WithTags()
            model.entitiesByName["Tag"]!.relationshipsByName["people"]!.maxCount = 1
            return model
        }
        let database = try Self.makeStore(M.v1WithTags()) { context in
            let ann = S.insert("Person", ["name": "Ann"], into: context)
            ann.setValue(Set([S.insert("Tag", ["label": "red"], into: context), S.insert("Tag", ["label": "blue"], into: context)]), forKey: "tags")
        }
        try Self.migrate(database, from: M.v1WithTags(), to: v2())
        #expect(try Self.layout(database) == Self.freshLayout(v2()))
        let context = try Self.open(database, v2())
        let tags = try S.fetch("Tag", context)
        #expect(tags.count == 2)
        #expect(tags.allSatisfy { ($0.value(forKey: "people") as? NSManagedObject)?.value(forKey: "name") as? String == "Ann" })
    }

    @Test func aRenamedEntityKeepsItsRowsInItsNewTable() throws {
        func v2() -> NSManagedObjectModel {
            let person = M.entity("Human", [M.attribute("name", .stringAttributeType), M.attribute("age", .integer16AttributeType)],
                                  renamedFrom: "Person")
            let car = M.entity("Car", [M.attribute("model", .stringAttributeType), M.attribute("year", .integer32AttributeType)])
            M.link(person, car)
            return M.model([car, M.entity("Note", [M.attribute("text", .stringAttributeType)]), person])
        }
        let database = try Self.v1Store()
        try Self.migrate(database, from: M.v1(), to: v2())
        #expect(try Self.layout(database) == Self.freshLayout(v2()))
        let context = try Self.open(database, v2())
        let humans = try S.fetch("Human", context)
        #expect(humans.map { $0.value(forKey: "name") as? String } == ["Ann", nil])
        #expect((humans[0].value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
        let human = S.insert("Human", ["name": "Cy"], into: context)
        try context.save()
        // Above every key the store took before the migration: its block was 1–100.
        #expect(human.objectID.primaryKey == 101)
    }

    @Test func numbersAndBooleansAreConvertedToTheirNewTypes() throws {
        let database = try Self.makeStore(S.convertedSource(), S.fillReadings)
        try Self.migrate(database, from: S.convertedSource(), to: S.convertedDestination())
        #expect(try Self.layout(database) == Self.freshLayout(S.convertedDestination()))
        S.expectConverted(try S.fetch("Reading", Self.open(database, S.convertedDestination())))
    }

    @Test func aFailureHalfWayLeavesTheDatabaseExactlyAsItWas() throws {
        // Two people named Ann: the unique index of the new model fails after every table was altered or rebuilt.
        let database = try Self.makeStore(M.v1()) { context in
            S.fillV1(context)
            _ = S.insert("Person", ["name": "Ann"], into: context)
        }
        let before = try Self.contents(database)
        let v2 = M.v1WithTags()
        v2.entities = v2.entities + [M.entity("Aardvark", [])]
        v2.entitiesByName["Person"]!.uniquenessConstraints = [["name"]]
        v2.entitiesByName["Car"]!.properties += [M.attribute("vin", .stringAttributeType, optional: false, defaultValue: "-")]
        let error = S.error { try Self.migrate(database, from: M.v1(), to: v2) }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSMigrationConstraintViolationError)
        #expect(try Self.contents(database) == before)
        #expect(try S.fetch("Person", Self.open(database, M.v1())).count == 3)
    }

    // MARK: Adding the store

    /// A version 1 store (Ann, Bo, a note) written with `V1` of a model bundle whose versions are
    /// `versions` (contents as `AutomaticMigrationTests` has them), and the bundle's current version.
    static func bundleStore(_ versions: [(String, String)], current: String, in folder: TemporaryFolder)
    throws -> (database: MigrationTestDatabase, current: NSManagedObjectModel) {
        let bundle = folder.url.appendingPathComponent("Model.xcdatamodeld")
        var v1: NSManagedObjectModel?
        for (name, contents) in versions {
            let model = try AutomaticMigrationTests.model(name, contents, in: bundle)
            if name == "V1" { v1 = model }
        }
        try PropertyListSerialization.data(fromPropertyList: ["_XCCurrentVersionName": "\(current).xcdatamodel"], format: .xml, options: 0)
            .write(to: bundle.appendingPathComponent(".xccurrentversion"))
        let database = try makeStore(v1 ?? (try AutomaticMigrationTests.model("Old", AutomaticMigrationTests.v1, in: folder.url))) { context in
            _ = S.insert("Person", ["name": "Ann"], into: context)
            _ = S.insert("Person", ["name": "Bo"], into: context)
            _ = S.insert("Note", ["text": "hi"], into: context)
        }
        return (database, try #require(NSManagedObjectModel(contentsOf: bundle)))
    }

    static let versions = [("V1", AutomaticMigrationTests.v1), ("V2", AutomaticMigrationTests.v2)]

    @Test func theOptionsMigrateTheStoreWhenItIsAdded() throws {
        let folder = try TemporaryFolder()
        let (database, v2) = try Self.bundleStore(Self.versions, current: "V2", in: folder)
        let context = try Self.open(database, v2, options: AutomaticMigrationTests.migrate)
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(Set(people.compactMap { $0.value(forKey: "name") as? String }) == ["Ann", "Bo"])
        #expect(people.allSatisfy { $0.value(forKey: "age") as? Int == 18 })
        let store = try #require(context.persistentStoreCoordinator?.persistentStores.first)
        #expect(store.metadata?[NSStoreModelVersionHashesKey] as? [String: Data] == v2.entityVersionHashesByName)
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: database.url, options: nil)
        #expect(metadata[NSStoreModelVersionHashesKey] as? [String: Data] == v2.entityVersionHashesByName)
        #expect(metadata[NSStoreUUIDKey] as? String == store.identifier)
        // It opens without the options now.
        #expect(try Self.open(database, v2).count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
    }

    /// A coordinator that still has the store open with the old model writes nothing after another
    /// coordinator migrated it (its entities may have other `Z_ENT` numbers now): its save fails.
    @Test func aCoordinatorOfTheOldModelWritesNothingAfterTheMigration() throws {
        let folder = try TemporaryFolder()
        let (database, v2) = try Self.bundleStore(Self.versions, current: "V2", in: folder)
        let v1 = try AutomaticMigrationTests.model("V1", AutomaticMigrationTests.v1, in: folder.url.appendingPathComponent("Model.xcdatamodeld"))
        let stale = try Self.open(database, v1)
        let people = try S.fetch("Person", stale)
        _ = try Self.open(database, v2, options: AutomaticMigrationTests.migrate)
        let migrated = try Self.contents(database)
        people[0].setValue("Changed", forKey: "name")
        let error = S.error { try stale.save() }
        #expect(error?.localizedDescription.contains("The store was migrated") == true, "\(String(describing: error))")
        #expect(try Self.contents(database) == migrated)
    }

    @Test(arguments: [nil, [NSMigratePersistentStoresAutomaticallyOption: true], [NSInferMappingModelAutomaticallyOption: true]] as [[String: Bool]?])
    func withoutBothOptionsTheStoreIsRefusedAndUntouched(_ options: [String: Bool]?) throws {
        let folder = try TemporaryFolder()
        let (database, v2) = try Self.bundleStore(Self.versions, current: "V2", in: folder)
        let before = try Self.contents(database)
        let error = S.error { _ = try Self.open(database, v2, options: options) }
        let automatic = options?[NSMigratePersistentStoresAutomaticallyOption] == true
        #expect(error?.code == (automatic ? NSMigrationMissingMappingModelError : NSPersistentStoreIncompatibleVersionHashError))
        #expect(try Self.contents(database) == before)
    }

    @Test func aMissingSourceModelOrAChangeThatCantBeInferredIsRefusedAndUntouched() throws {
        let folder = try TemporaryFolder()
        let (database, v2) = try Self.bundleStore([("V2", AutomaticMigrationTests.v2)], current: "V2", in: folder)
        let before = try Self.contents(database)
        #expect(S.error { _ = try Self.open(database, v2, options: AutomaticMigrationTests.migrate) }?.code == NSMigrationMissingSourceModelError)
        #expect(try Self.contents(database) == before)
        let other = try TemporaryFolder()
        let (refused, v3) = try Self.bundleStore([("V1", AutomaticMigrationTests.v1), ("V3", AutomaticMigrationTests.v3)], current: "V3", in: other)
        let untouched = try Self.contents(refused)
        let error = S.error { _ = try Self.open(refused, v3, options: AutomaticMigrationTests.migrate) }
        #expect(error?.code == NSMigrationMissingMappingModelError)
        #expect((error?.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == NSInferredMappingModelError)
        #expect(try Self.contents(refused) == untouched)
    }

    @Test func aMigrationWaitingLongerThanTheTimeoutForATableAnotherSessionReadsIsRefusedAndUntouched() throws {
        let folder = try TemporaryFolder()
        let (database, v2) = try Self.bundleStore(Self.versions, current: "V2", in: folder)
        let before = try Self.contents(database)
        // Another server's session reading the table the migration alters, as a pinned query
        // generation does: it holds ACCESS SHARE until its transaction ends. (The server ends it
        // after 20 s idle, so that a migration that waited for it fails this test, not hangs it.)
        let reader = try LibPQConnection(url: database.url, password: nil)
        defer { reader.close() }
        try reader.run("SET idle_in_transaction_session_timeout = '20s'; BEGIN")
        _ = try reader.execute("SELECT count(*) FROM \"ZPERSON\"", [])

        var options = AutomaticMigrationTests.migrate
        options[NSPersistentStoreTimeoutOption] = 1
        let started = Date()
        let error = S.error { _ = try Self.open(database, v2, options: options) }
        #expect(Date().timeIntervalSince(started) < 10, "it waited no longer than the timeout")
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSMigrationError)
        #expect(error?.userInfo[NSPostgreSQLStateErrorKey] as? String == "55P03")
        #expect(error?.localizedDescription.contains("NSPersistentStoreTimeoutOption") == true)
        #expect(error?.localizedDescription.contains("left untouched") == true)
        try reader.run("COMMIT")
        #expect(try Self.contents(database) == before)

        // Once the reader's transaction ended, opening migrates.
        let context = try Self.open(database, v2, options: options)
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        #expect(people.count == 2 && people.allSatisfy { $0.value(forKey: "age") as? Int == 18 })
    }

    @Test func twoServersAddingTheOldStoreAtOnceBothOpenItWhileAnotherHasItOpen() throws {
        let folder = try TemporaryFolder()
        let (database, v2) = try Self.bundleStore(Self.versions, current: "V2", in: folder)
        // A server still on version 1, with the store open and idle.
        let old = try Self.open(database, try #require(NSManagedObjectModel(contentsOf: folder.url.appendingPathComponent("Model.xcdatamodeld/V1.xcdatamodel"))))
        #expect(try old.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
        let coordinators = [NSPersistentStoreCoordinator(managedObjectModel: v2), NSPersistentStoreCoordinator(managedObjectModel: v2)]
        let failures = CoreData.Locked<[String]>([])
        let url = database.url
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            do {
                try coordinators[index].addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url,
                                                           options: AutomaticMigrationTests.migrate)
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        for coordinator in coordinators {
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
        }
        #expect(try database.query("SELECT count(*) FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Tag'") == [["1"]])
    }
}

/// A database of its own on the test server (`COREDATA_POSTGRES_URL`), dropped when the value goes.
final class MigrationTestDatabase {
    static let server = ProcessInfo.processInfo.environment["COREDATA_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
    let name: String
    let url: URL

    init() throws {
        NSPersistentStoreCoordinator.registerPostgreSQLStore()
        let name = "cd_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try Self.onServer { try $0.run("CREATE DATABASE \"\(name)\"") }
        self.name = name
        var components = URLComponents(url: Self.server!, resolvingAgainstBaseURL: false)!
        components.path = "/" + name
        url = components.url!
    }

    deinit {
        do {
            try Self.onServer { try $0.run("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)") }
        } catch {
            Issue.record("The test database \(name) could not be dropped: \(error)")
        }
    }

    private static func onServer(_ body: (LibPQConnection) throws -> Void) throws {
        let connection = try LibPQConnection(url: server!, password: nil)
        defer { connection.close() }
        try body(connection)
    }

    /// Rows of `sql`, each column as text (`nil` for NULL).
    func query(_ sql: String) throws -> [[String?]] {
        let connection = try LibPQConnection(url: url, password: nil)
        defer { connection.close() }
        let rows = try connection.execute(sql, [])
        return (0..<rows.count).map { row in (0..<rows.columnCount).map { rows.isNull(row, $0) ? nil : rows.text(row, $0) } }
    }
}
