import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The in-place SQLite migration run directly on a file, with models built in code (the
/// automatic migration of `addPersistentStore`, which finds the source model on disk, is
/// `AutomaticMigrationTests`).
@Suite struct SQLiteLightweightMigrationTests {
    typealias M = MigrationModels

    /// A store of `model` in `folder`, with `fill` run on a context and saved; the store is
    /// removed from its coordinator before returning.
    static func makeStore(_ model: NSManagedObjectModel, in folder: TemporaryFolder, _ fill: (NSManagedObjectContext) throws -> Void) throws -> URL {
        let url = folder.url.appendingPathComponent("Store.sqlite")
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try fill(context)
        try context.save()
        try coordinator.remove(store)
        return url
    }

    static func insert(_ entity: String, _ values: [String: Any], into context: NSManagedObjectContext) -> NSManagedObject {
        let object = NSEntityDescription.insertNewObject(forEntityName: entity, into: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    /// Migrates the file from `source` to `destination` as the automatic migration does, with
    /// the source model given.
    static func migrate(_ url: URL, from source: NSManagedObjectModel, to destination: NSManagedObjectModel) throws {
        let db = try SQLiteConnection(path: url.path, create: false)
        try db.transaction {
            let metadata = try SQLiteStore.readMetadata(db)
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
            try SQLiteLightweightMigration(db: db, source: source, destination: destination, mapping: mapping).run(metadata: metadata)
        }
    }

    /// A context on the store at `url` opened with `model`.
    static func open(_ url: URL, _ model: NSManagedObjectModel) throws -> NSManagedObjectContext {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func fetch(_ entity: String, _ context: NSManagedObjectContext) throws -> [NSManagedObject] {
        try context.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))
            .sorted { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) }
    }

    /// The error `body` throws, as an `NSError`.
    static func error(_ body: () throws -> Void) -> NSError? {
        do { try body() } catch { return error as NSError }
        return nil
    }

    /// A file's layout: each table's columns (name and type, in any order), its indexes' SQL,
    /// and `Z_PRIMARYKEY`'s entities.
    struct Layout: Equatable {
        var tables: [String: Set<String>] = [:]
        var indexes: Set<String> = []
        var entities: [[String]] = []
    }

    static func layout(_ url: URL) throws -> Layout {
        var layout = Layout()
        for row in try RawSQLite.query(url.path, "SELECT name FROM sqlite_master WHERE type = 'table'") {
            let name = row[0]!
            let columns = try RawSQLite.query(url.path, "PRAGMA table_info(\"\(name)\")").map { "\($0[1]!) \($0[2]!)" }
            layout.tables[name] = Set(columns)
        }
        layout.indexes = Set(try RawSQLite.query(url.path, "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
            .map { $0[0]!.replacingOccurrences(of: "IF NOT EXISTS ", with: "") })
        layout.entities = try RawSQLite.query(url.path, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").map { $0.map { $0 ?? "" } }
        return layout
    }

    /// The layout of a new store of `model`.
    static func freshLayout(_ model: NSManagedObjectModel) throws -> Layout {
        let folder = try TemporaryFolder()
        return try layout(makeStore(model, in: folder) { _ in })
    }

    /// Version 1 with two people (one without a name), two cars owned by the first, one note.
    static func v1Store(_ folder: TemporaryFolder, _ model: NSManagedObjectModel = M.v1()) throws -> URL {
        try makeStore(model, in: folder, fillV1)
    }

    /// Version 1's rows: two people (one without a name), two cars owned by the first, one note.
    static func fillV1(_ context: NSManagedObjectContext) {
        let ann = Self.insert("Person", ["name": "Ann", "age": 40], into: context)
        _ = Self.insert("Person", ["age": 7], into: context)
        let a = Self.insert("Car", ["model": "A", "year": 1999], into: context)
        let b = Self.insert("Car", ["model": "B", "year": 2020], into: context)
        a.setValue(ann, forKey: "owner")
        b.setValue(ann, forKey: "owner")
        _ = Self.insert("Note", ["text": "hello"], into: context)
    }

    /// A store of version 1 (``v1Store(_:_:)``) migrated to `destination`, and a context on it.
    static func migratedV1Store(to destination: NSManagedObjectModel, in folder: TemporaryFolder) throws -> (url: URL, context: NSManagedObjectContext) {
        let source = M.v1()
        let url = try v1Store(folder, source)
        try migrate(url, from: source, to: destination)
        return (url, try open(url, destination))
    }

    /// A store of version 1 migrated to version 1 as `change` changes it, its layout checked
    /// against a new store's of that model; a context on it.
    static func migratedV1Store(in folder: TemporaryFolder, _ change: (NSManagedObjectModel) -> Void) throws -> NSManagedObjectContext {
        func v2() -> NSManagedObjectModel {
            let model = M.v1()
            change(model)
            return model
        }
        let (url, context) = try migratedV1Store(to: v2(), in: folder)
        #expect(try layout(url) == freshLayout(v2()))
        return context
    }

    @Test func anAddedAttributeIsAnAddedColumnFilledWithItsDefault() throws {
        let folder = try TemporaryFolder()
        let v2 = M.v1()
        let person = v2.entitiesByName["Person"]!
        person.properties += [M.attribute("email", .stringAttributeType),
                              M.attribute("score", .integer32AttributeType, optional: false, defaultValue: 7)]
        let (url, context) = try Self.migratedV1Store(to: v2, in: folder)
        // In place: the columns were appended to the table Apple's way.
        let columns = try RawSQLite.query(url.path, "PRAGMA table_info(ZPERSON)").map { $0[1]! }
        #expect(Array(columns.suffix(2)) == ["ZEMAIL", "ZSCORE"] || Array(columns.suffix(2)) == ["ZSCORE", "ZEMAIL"])
        let expected = M.v1()
        expected.entitiesByName["Person"]!.properties += [M.attribute("email", .stringAttributeType),
                                                           M.attribute("score", .integer32AttributeType, optional: false, defaultValue: 7)]
        #expect(try Self.layout(url) == Self.freshLayout(expected))
        let people = try Self.fetch("Person", context)
        #expect(people.map { $0.value(forKey: "score") as? Int } == [7, 7])
        #expect(people.map { $0.value(forKey: "email") as? String } == [nil, nil])
        #expect(people.map { $0.value(forKey: "name") as? String } == ["Ann", nil])
        #expect(people.map { $0.objectID.primaryKey } == [1, 2])
        #expect((people[0].value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
    }

    /// External storage turned off, then on again: the bytes are rewritten with or without
    /// Apple's marker, read from their files when they were in one. (They were copied as they
    /// were: the values read with a stray marker byte, and the next open removed the files.)
    @Test func turningExternalStorageOffAndOnKeepsTheBytes() throws {
        func model(external: Bool) -> NSManagedObjectModel {
            let name = NSAttributeDescription(); name.name = "name"; name.attributeType = .stringAttributeType
            let photo = NSAttributeDescription(); photo.name = "photo"; photo.attributeType = .binaryDataAttributeType
            photo.allowsExternalBinaryDataStorage = external
            let entity = NSEntityDescription(); entity.name = "Photo"; entity.properties = [name, photo]
            let model = NSManagedObjectModel(); model.entities = [entity]
            return model
        }
        let folder = try TemporaryFolder()
        let large = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let small = Data([1, 2, 3])
        let url = try Self.makeStore(model(external: true), in: folder) { context in
            _ = Self.insert("Photo", ["name": "large", "photo": large], into: context)
            _ = Self.insert("Photo", ["name": "small", "photo": small], into: context)
            _ = Self.insert("Photo", ["name": "none"], into: context)
        }
        func photos(_ external: Bool) throws -> [Data?] {
            let context = try Self.open(url, model(external: external))
            let objects = try Self.fetch("Photo", context)
            return objects.map { $0.value(forKey: "photo") as? Data }
        }
        try Self.migrate(url, from: model(external: true), to: model(external: false))
        #expect(try photos(false) == [large, small, nil])
        #expect(try photos(false) == [large, small, nil], "a second open still reads them")
        #expect(try RawSQLite.query(url.path, "SELECT length(ZPHOTO) FROM ZPHOTO ORDER BY Z_PK") == [["200000"], ["3"], [nil]])
        try Self.migrate(url, from: model(external: false), to: model(external: true))
        #expect(try photos(true) == [large, small, nil])
        #expect(try RawSQLite.query(url.path, "SELECT hex(substr(ZPHOTO, 1, 1)) FROM ZPHOTO ORDER BY Z_PK") == [["01"], ["01"], [""]])
        withExtendedLifetime(folder) {}
    }

    /// An added entity that comes first by name renumbers the others: persistent history's
    /// changes recorded before the migration still name their entities (they named the new one).
    @Test func historyRecordedBeforeARenumberingNamesTheSameEntities() throws {
        func model(withAardvark: Bool) -> NSManagedObjectModel {
            let title = NSAttributeDescription(); title.name = "title"; title.attributeType = .stringAttributeType
            let note = NSEntityDescription(); note.name = "Note"; note.properties = [title]
            let model = NSManagedObjectModel()
            if withAardvark {
                let aardvark = NSEntityDescription(); aardvark.name = "Aardvark"
                model.entities = [aardvark, note]
            } else {
                model.entities = [note]
            }
            return model
        }
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Store.sqlite")
        let tracking: [AnyHashable: Any] = [NSPersistentHistoryTrackingKey: true]
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model(withAardvark: false))
            let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: tracking)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            _ = Self.insert("Note", ["title": "a"], into: context)
            try context.save()
            try coordinator.remove(store)
        }
        try Self.migrate(url, from: model(withAardvark: false), to: model(withAardvark: true))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model(withAardvark: true))
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: tracking)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let request = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        let transactions = try #require((try context.execute(request) as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction])
        let change = try #require(transactions.first?.changes?.first)
        #expect(change.changedObjectID.entity.name == "Note")
        #expect((try context.existingObject(with: change.changedObjectID)).value(forKey: "title") as? String == "a")
    }

    @Test func tablesAndIndexesOutsideTheModelAreLeftAlone() throws {
        let folder = try TemporaryFolder()
        let source = M.v1()
        let url = try Self.v1Store(folder, source)
        try RawSQLite.execute(url.path, "CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, ZAUTHOR VARCHAR); CREATE INDEX ATRANSACTION_ZAUTHOR ON ATRANSACTION (ZAUTHOR); INSERT INTO ATRANSACTION (ZAUTHOR) VALUES ('app')")
        let v2 = M.v1()
        v2.entities = v2.entities + [M.entity("Aardvark", [])]
        try Self.migrate(url, from: source, to: v2)
        #expect(try RawSQLite.query(url.path, "SELECT ZAUTHOR FROM ATRANSACTION") == [["app"]])
        #expect(try RawSQLite.query(url.path, "SELECT count(*) FROM sqlite_master WHERE name = 'ATRANSACTION_ZAUTHOR'") == [["1"]])
    }

    @Test func aRemovedAttributeLosesItsColumn() throws {
        let folder = try TemporaryFolder()
        let v2 = M.v1()
        let car = v2.entitiesByName["Car"]!
        car.properties = car.properties.filter { $0.name != "year" }
        let (url, context) = try Self.migratedV1Store(to: v2, in: folder)
        let columns = try RawSQLite.query(url.path, "PRAGMA table_info(ZCAR)").map { $0[1]! }
        #expect(!columns.contains("ZYEAR"))
        #expect(try Self.fetch("Car", context).map { $0.value(forKey: "model") as? String } == ["A", "B"])
    }

    @Test func aTriggerNamingARemovedAttributesColumnGoesWithIt() throws {
        let folder = try TemporaryFolder()
        let source = M.v1()
        let url = try Self.v1Store(folder, source)
        // As Apple writes a derived attribute's trigger; SQLite refuses `DROP COLUMN ZYEAR` while
        // it is there (the migration failed with 134180). It names a dropped column of each
        // table (dropped once). The others SQLite keeps stay, whatever words they hold.
        try RawSQLite.execute(url.path, """
            CREATE TRIGGER Z_DA_ZCAR_Car_year_UPDATE AFTER UPDATE OF Z_OPT ON ZCAR FOR EACH ROW BEGIN
                UPDATE ZPERSON SET "ZAGE" = NEW.ZYEAR WHERE Z_PK = NEW.ZOWNER; END;
            CREATE TRIGGER ZCAR_TOUCHED AFTER UPDATE ON ZCAR BEGIN SELECT NEW.ZMODEL; END;
            CREATE TRIGGER ZPERSON_NOTE AFTER UPDATE ON ZPERSON BEGIN UPDATE ZCAR SET ZMODEL = 'ZYEAR ZAGE' WHERE ZOWNER = NEW.Z_PK; END
            """)
        let v2 = M.v1()
        for (entity, attribute) in [("Car", "year"), ("Person", "age")] {
            v2.entitiesByName[entity]!.properties = v2.entitiesByName[entity]!.properties.filter { $0.name != attribute }
        }
        try Self.migrate(url, from: source, to: v2)
        #expect(try RawSQLite.query(url.path, "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name") == [["ZCAR_TOUCHED"], ["ZPERSON_NOTE"]])
        #expect(try !RawSQLite.query(url.path, "PRAGMA table_info(ZCAR)").contains { $0[1] == "ZYEAR" })
        #expect(try !RawSQLite.query(url.path, "PRAGMA table_info(ZPERSON)").contains { $0[1] == "ZAGE" })
        #expect(try RawSQLite.query(url.path, "SELECT ZMODEL FROM ZCAR ORDER BY Z_PK") == [["A"], ["B"]])
    }

    @Test func aRenamedAttributeKeepsItsValues() throws {
        let folder = try TemporaryFolder()
        let v2 = M.v1(personName: M.attribute("fullName", .stringAttributeType, optional: false, defaultValue: "?", renamedFrom: "name"))
        let (url, context) = try Self.migratedV1Store(to: v2, in: folder)
        #expect(try Self.layout(url) == Self.freshLayout(M.v1(personName: M.attribute("fullName", .stringAttributeType, optional: false, defaultValue: "?"))))
        // Renamed, and made non-optional: the default fills the NULL.
        #expect(try Self.fetch("Person", context).map { $0.value(forKey: "fullName") as? String } == ["Ann", "?"])
    }

    @Test func aRenamedAttributeIsRenamedInPlaceWithoutCopyingTheTable() throws {
        let folder = try TemporaryFolder()
        let source = M.v1()
        let url = try Self.v1Store(folder, source)
        // A trigger of the file's own on the table (as Apple's derived attributes have) goes with
        // a rebuilt table and stays on a table altered in place.
        try RawSQLite.execute(url.path, "CREATE TRIGGER ZPERSON_TOUCHED AFTER UPDATE ON ZPERSON BEGIN SELECT 1; END")
        let v2 = M.v1(personName: M.attribute("fullName", .stringAttributeType, optional: false, defaultValue: "?", renamedFrom: "name"))
        try Self.migrate(url, from: source, to: v2)
        // ALTER TABLE … RENAME COLUMN and an UPDATE of the NULLs: no row copied.
        #expect(try RawSQLite.query(url.path, "SELECT count(*) FROM sqlite_master WHERE name = 'ZPERSON_TOUCHED'") == [["1"]])
        #expect(try RawSQLite.query(url.path, "SELECT ZFULLNAME FROM ZPERSON ORDER BY Z_PK") == [["Ann"], ["?"]])
        #expect(try !RawSQLite.query(url.path, "PRAGMA table_info(ZPERSON)").contains { $0[1] == "ZNAME" })
    }

    @Test func anOptionalAttributeMadeNonOptionalGetsItsDefault() throws {
        let folder = try TemporaryFolder()
        let v2 = M.v1(personName: M.attribute("name", .stringAttributeType, optional: false, defaultValue: "Nobody"))
        let context = try Self.migratedV1Store(to: v2, in: folder).context
        #expect(try Self.fetch("Person", context).map { $0.value(forKey: "name") as? String } == ["Ann", "Nobody"])
    }

    /// The error of migrating a store of version 1 to `destination`, and whether the file is
    /// still byte for byte as it was.
    static func refusal(_ destination: NSManagedObjectModel) throws -> (error: NSError?, untouched: Bool) {
        let folder = try TemporaryFolder()
        let source = M.v1()
        let url = try v1Store(folder, source)
        let before = try Data(contentsOf: url)
        let error = Self.error { try migrate(url, from: source, to: destination) }
        return (error, try Data(contentsOf: url) == before)
    }

    @Test func aNonOptionalAttributeWithoutDefaultIsRefusedWhenRowsLackIt() throws {
        let v2 = M.v1()
        v2.entitiesByName["Car"]!.properties += [M.attribute("vin", .stringAttributeType, optional: false)]
        let (error, untouched) = try Self.refusal(v2)
        #expect(error?.code == NSMigrationError)
        #expect(error?.userInfo["entity"] as? String == "Car" && error?.userInfo["property"] as? String == "vin")
        #expect(error?.localizedDescription.contains("Car.vin") == true)
        #expect(untouched)
        // Made non-optional without a default while a row holds NULL: refused too.
        let refused = try Self.refusal(M.v1(personName: M.attribute("name", .stringAttributeType, optional: false)))
        #expect(refused.error?.code == NSMigrationError && refused.error?.localizedDescription.contains("Person.name") == true)
        #expect(refused.untouched)
    }

    @Test func addedAndRemovedEntitiesWithRenumberingKeepRowsKeysAndRelationships() throws {
        let folder = try TemporaryFolder()
        let source = M.v1()
        let url = try Self.v1Store(folder, source)
        // Note removed; Aardvark (numbered first) and Tag added: every Z_ENT changes.
        func v2() -> NSManagedObjectModel {
            let model = M.v1WithTags()
            let byName = model.entitiesByName
            model.entities = [M.entity("Aardvark", [M.attribute("x", .integer16AttributeType)]), byName["Car"]!, byName["Person"]!, byName["Tag"]!]
            return model
        }
        let destination = v2()
        try Self.migrate(url, from: source, to: destination)
        #expect(try Self.layout(url) == Self.freshLayout(v2()))
        #expect(try RawSQLite.query(url.path, "SELECT count(*) FROM sqlite_master WHERE name = 'ZNOTE'") == [["0"]])
        let context = try Self.open(url, destination)
        let people = try Self.fetch("Person", context)
        #expect(people.map { $0.objectID.primaryKey } == [1, 2])
        let cars = try #require(people.first?.value(forKey: "cars") as? Set<NSManagedObject>)
        #expect(Set(cars.compactMap { $0.value(forKey: "model") as? String }) == ["A", "B"])
        // New rows get new keys, and the new entities work.
        let tag = Self.insert("Tag", ["label": "x"], into: context)
        tag.setValue(Set<NSManagedObject>([people[0]]), forKey: "people")
        let third = Self.insert("Person", ["name": "Cy"], into: context)
        try context.save()
        #expect(third.objectID.primaryKey == 3)
        let reopened = try Self.open(url, v2())
        let ann = try Self.fetch("Person", reopened).first { $0.value(forKey: "name") as? String == "Ann" }
        #expect((ann?.value(forKey: "tags") as? Set<NSManagedObject>)?.count == 1)
    }

    @Test(arguments: ["Aardvark", "Zebra"])
    func aJoinTableIsKeptThroughRenumbering(_ added: String) throws {
        // An Aardvark renumbers every entity (the join table is rebuilt under its new name); a
        // Zebra renumbers none (it stays as it is, with its index).
        func model(extra: Bool) -> NSManagedObjectModel {
            let model = M.v1WithTags()
            if extra { model.entities = model.entities + [M.entity(added, [])] }
            return model
        }
        let folder = try TemporaryFolder()
        let source = model(extra: false)
        let url = try Self.makeStore(source, in: folder) { context in
            let ann = Self.insert("Person", ["name": "Ann"], into: context)
            let red = Self.insert("Tag", ["label": "red"], into: context)
            let blue = Self.insert("Tag", ["label": "blue"], into: context)
            ann.setValue(Set([red, blue]), forKey: "tags")
        }
        let destination = model(extra: true)
        try Self.migrate(url, from: source, to: destination)
        #expect(try Self.layout(url) == Self.freshLayout(model(extra: true)))
        let context = try Self.open(url, destination)
        let ann = try #require(try Self.fetch("Person", context).first)
        let labels = (ann.value(forKey: "tags") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "label") as? String }
        #expect(Set(labels ?? []) == ["red", "blue"])
    }

    @Test func anEntityMovedUnderANewParentMovesItsRows() throws {
        let folder = try TemporaryFolder()
        let context = try Self.migratedV1Store(in: folder) { model in
            let thing = M.entity("Thing", [M.attribute("created", .dateAttributeType)])
            thing.subentities = [model.entitiesByName["Note"]!]
            model.entities = model.entities + [thing]
        }
        let notes = try Self.fetch("Note", context)
        #expect(notes.map { $0.value(forKey: "text") as? String } == ["hello"])
        #expect(try Self.fetch("Thing", context).count == 1)
        // The new root hands out keys after the moved rows'.
        let thing = Self.insert("Thing", [:], into: context)
        try context.save()
        #expect(thing.objectID.primaryKey == 2)
    }

    @Test func aToOneAddedIsAColumnWithItsIndex() throws {
        let folder = try TemporaryFolder()
        let context = try Self.migratedV1Store(in: folder) { model in
            M.relate(model.entitiesByName["Note"]!, "author", toMany: false, model.entitiesByName["Person"]!, "notes", inverseToMany: true)
        }
        let note = try #require(try Self.fetch("Note", context).first)
        #expect(note.value(forKey: "author") == nil)
        note.setValue(try Self.fetch("Person", context).first, forKey: "author")
        try context.save()
    }

    @Test func aToManyMadeOrderedKeepsItsMembersInKeyOrder() throws {
        let folder = try TemporaryFolder()
        let context = try Self.migratedV1Store(in: folder) { model in
            model.entitiesByName["Person"]!.relationshipsByName["cars"]!.isOrdered = true
        }
        let ann = try #require(try Self.fetch("Person", context).first)
        let cars = try #require(ann.value(forKey: "cars") as? NSOrderedSet)
        #expect(cars.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "model") as? String } == ["A", "B"])
    }

    @Test func aRemovedRelationshipLosesItsColumn() throws {
        let folder = try TemporaryFolder()
        let context = try Self.migratedV1Store(in: folder) { model in
            let byName = model.entitiesByName
            byName["Person"]!.properties = byName["Person"]!.properties.filter { $0.name != "cars" }
            byName["Car"]!.properties = byName["Car"]!.properties.filter { $0.name != "owner" }
        }
        #expect(try Self.fetch("Car", context).count == 2)
    }

    @Test func aOneToManyMadeManyToManyFillsItsJoinTable() throws {
        let folder = try TemporaryFolder()
        let context = try Self.migratedV1Store(in: folder) { model in
            model.entitiesByName["Car"]!.relationshipsByName["owner"]!.maxCount = 0
        }
        let ann = try #require(try Self.fetch("Person", context).first)
        let cars = try #require(ann.value(forKey: "cars") as? Set<NSManagedObject>)
        #expect(Set(cars.compactMap { $0.value(forKey: "model") as? String }) == ["A", "B"])
        #expect(cars.allSatisfy { ($0.value(forKey: "owner") as? Set<NSManagedObject>) == [ann] })
    }

    @Test func aManyToManyMadeOneToManyKeepsAnOwner() throws {
        func v2() -> NSManagedObjectModel {
            let model = M.v1WithTags()
            model.entitiesByName["Tag"]!.relationshipsByName["people"]!.maxCount = 1
            return model
        }
        let folder = try TemporaryFolder()
        let source = M.v1WithTags()
        let url = try Self.makeStore(source, in: folder) { context in
            let ann = Self.insert("Person", ["name": "Ann"], into: context)
            ann.setValue(Set([Self.insert("Tag", ["label": "red"], into: context), Self.insert("Tag", ["label": "blue"], into: context)]),
                         forKey: "tags")
        }
        try Self.migrate(url, from: source, to: v2())
        #expect(try Self.layout(url) == Self.freshLayout(v2()))
        let context = try Self.open(url, v2())
        let tags = try Self.fetch("Tag", context)
        #expect(tags.count == 2)
        #expect(tags.allSatisfy { ($0.value(forKey: "people") as? NSManagedObject)?.value(forKey: "name") as? String == "Ann" })
    }

    @Test func aStoreWhoseColumnsAnEarlierMigrationAppendedMigratesAgain() throws {
        let folder = try TemporaryFolder()
        let v2 = M.v1()
        v2.entitiesByName["Note"]!.properties += [M.attribute("mood", .stringAttributeType)]
        let (url, context) = try Self.migratedV1Store(to: v2, in: folder)
        let note = try #require(try Self.fetch("Note", context).first)
        note.setValue("calm", forKey: "mood")
        try context.save()
        try context.persistentStoreCoordinator!.remove(context.persistentStoreCoordinator!.persistentStores[0])
        // Version 3 renames the appended column and renumbers every entity: the table is rebuilt.
        func v3() -> NSManagedObjectModel {
            let model = M.v1()
            model.entitiesByName["Note"]!.properties += [M.attribute("feeling", .stringAttributeType, renamedFrom: "mood")]
            model.entities = model.entities + [M.entity("Aardvark", [])]
            return model
        }
        try Self.migrate(url, from: v2, to: v3())
        #expect(try Self.layout(url) == Self.freshLayout(v3()))
        let notes = try Self.fetch("Note", try Self.open(url, v3()))
        #expect(notes.map { $0.value(forKey: "feeling") as? String } == ["calm"])
        #expect(notes.map { $0.value(forKey: "text") as? String } == ["hello"])
    }

    @Test func aOneToManyMadeOneToOneKeepsTheLowestKey() throws {
        let folder = try TemporaryFolder()
        let context = try Self.migratedV1Store(in: folder) { model in
            model.entitiesByName["Person"]!.relationshipsByName["cars"]!.maxCount = 1
        }
        let people = try Self.fetch("Person", context)
        #expect((people[0].value(forKey: "cars") as? NSManagedObject)?.value(forKey: "model") as? String == "A")
        #expect(people[1].value(forKey: "cars") == nil)
        // The other side is as it was.
        #expect(try Self.fetch("Car", context).allSatisfy { $0.value(forKey: "owner") as? NSManagedObject == people[0] })
    }

    @Test func aRenamedEntityKeepsItsRowsInItsNewTable() throws {
        func v2() -> NSManagedObjectModel {
            let person = M.entity("Human", [M.attribute("name", .stringAttributeType), M.attribute("age", .integer16AttributeType)],
                                  renamedFrom: "Person")
            let car = M.entity("Car", [M.attribute("model", .stringAttributeType), M.attribute("year", .integer32AttributeType)])
            M.link(person, car)
            return M.model([car, M.entity("Note", [M.attribute("text", .stringAttributeType)]), person])
        }
        let folder = try TemporaryFolder()
        let (url, context) = try Self.migratedV1Store(to: v2(), in: folder)
        #expect(try Self.layout(url) == Self.freshLayout(v2()))
        let humans = try Self.fetch("Human", context)
        #expect(humans.map { $0.value(forKey: "name") as? String } == ["Ann", nil])
        #expect((humans[0].value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
        let human = Self.insert("Human", ["name": "Cy"], into: context)
        try context.save()
        #expect(human.objectID.primaryKey == 3)
    }

    /// A to-many made a required to-one: an owner that had no member would have no value; the
    /// migration is refused, as for any required value (it went through, and the next save of
    /// such a person failed validation).
    @Test func aToManyMadeARequiredToOneIsRefusedForAnOwnerWithoutMembers() throws {
        let v2 = M.v1()
        let cars = v2.entitiesByName["Person"]!.relationshipsByName["cars"]!
        cars.maxCount = 1
        cars.isOptional = false
        let (error, untouched) = try Self.refusal(v2)
        #expect(error?.code == NSMigrationError && error?.localizedDescription.contains("Person.cars") == true)
        #expect(untouched)
        // Every person with a car: it migrates.
        let folder = try TemporaryFolder()
        let url = try Self.makeStore(M.v1(), in: folder) { context in
            let ann = Self.insert("Person", ["name": "Ann"], into: context)
            Self.insert("Car", ["model": "A"], into: context).setValue(ann, forKey: "owner")
        }
        try Self.migrate(url, from: M.v1(), to: v2)
    }

    @Test func aRequiredToOneLeftEmptyIsRefused() throws {
        let v2 = M.v1()
        M.relate(v2.entitiesByName["Note"]!, "author", toMany: false, v2.entitiesByName["Person"]!, "notes", inverseToMany: true)
        v2.entitiesByName["Note"]!.relationshipsByName["author"]!.isOptional = false
        let (error, untouched) = try Self.refusal(v2)
        #expect(error?.code == NSMigrationError && error?.localizedDescription.contains("Note.author") == true)
        #expect(untouched)
    }
}
