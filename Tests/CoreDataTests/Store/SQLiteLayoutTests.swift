import Foundation
import Testing
@testable import CoreData

@Suite("SQLite file layout")
struct SQLiteLayoutTests {
    @Test func tablesAndColumnsFollowCoreDataLayout() throws {
        let stack = try TestStack()
        let rows = try RawSQLite.query(stack.url.path, "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        let tables = Dictionary(uniqueKeysWithValues: rows.map { ($0[0]!, $0[1]!) })
        #expect(Set(tables.keys).isSuperset(of: ["ZPERSON", "ZCAR", "ZTAG", "ZPLAYLIST", "ZSONG", "ZVEHICLE", "ZGARAGE",
                                                  "Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]))
        // Sub-entities share their root's table.
        #expect(tables["ZTRUCK"] == nil && tables["ZBIKE"] == nil)
        #expect(tables["ZPERSON"] == "CREATE TABLE ZPERSON ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAGE INTEGER, ZNAME VARCHAR )")
        let car = try #require(tables["ZCAR"])
        #expect(car.hasPrefix("CREATE TABLE ZCAR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, "))
        for column in ["ZYEAR INTEGER", "ZELECTRIC INTEGER", "ZOWNER INTEGER", "ZPRICE FLOAT", "ZBUILT TIMESTAMP", "ZCOST DECIMAL",
                       "ZNAME VARCHAR", "ZSITE VARCHAR", "ZVIN BLOB", "ZPHOTO BLOB", "ZEXTRAS BLOB"] {
            #expect(car.contains(column), "ZCAR lacks \(column)")
        }
        #expect(!car.contains("ZSCRATCH"), "transient attributes have no column")
        // Colliding sub-entity columns are numbered; the to-one to a hierarchy carries no entity column here.
        let vehicle = try #require(tables["ZVEHICLE"])
        #expect(vehicle.contains("ZLOAD INTEGER") && vehicle.contains("ZLOAD1 FLOAT"))
        // Ordered one-to-many: Z_FOK_ column after the foreign key in the member's table.
        #expect(try #require(tables["ZSONG"]).contains("ZPLAYLIST INTEGER, Z_FOK_PLAYLIST INTEGER"))
        // Many-to-many: Z_<n><NAME> join table.
        let carNumber = stack.model.entitiesByName["Car"]!.layout.entityNumber
        let tagNumber = stack.model.entitiesByName["Tag"]!.layout.entityNumber
        let join = "Z_\(carNumber)TAGS"
        #expect(tables[join] == "CREATE TABLE \(join) ( Z_\(carNumber)CARS INTEGER, Z_\(tagNumber)TAGS INTEGER, PRIMARY KEY (Z_\(carNumber)CARS, Z_\(tagNumber)TAGS) )")
        #expect(tables["Z_PRIMARYKEY"] == "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        #expect(tables["Z_METADATA"] == "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
    }

    /// Sibling sub-entities of one table, each with a to-one named `parent` (into a hierarchy, so
    /// with an entity column) that is the inverse of an ordered to-many: the foreign keys are
    /// numbered (`ZPARENT`, `ZPARENT1`) and so are the columns named after them. Both entity and
    /// order columns once collided, and no store of such a model could be made.
    @Test func columnsNamedAfterANumberedForeignKeyAreNumberedToo() throws {
        func relationship(_ name: String, _ destination: NSEntityDescription, toMany: Bool) -> NSRelationshipDescription {
            let r = NSRelationshipDescription()
            r.name = name
            r.destinationEntity = destination
            r.maxCount = toMany ? 0 : 1
            r.isOrdered = toMany
            return r
        }
        let item = NSEntityDescription(); item.name = "Item"; item.isAbstract = true
        let note = NSEntityDescription(); note.name = "Note"
        let task = NSEntityDescription(); task.name = "Task"
        let container = NSEntityDescription(); container.name = "Container"; container.isAbstract = true
        let folder = NSEntityDescription(); folder.name = "Folder"
        let project = NSEntityDescription(); project.name = "Project"
        let noteParent = relationship("parent", container, toMany: false), notes = relationship("notes", note, toMany: true)
        let taskParent = relationship("parent", container, toMany: false), tasks = relationship("tasks", task, toMany: true)
        noteParent.inverseRelationship = notes; notes.inverseRelationship = noteParent
        taskParent.inverseRelationship = tasks; tasks.inverseRelationship = taskParent
        let title = NSAttributeDescription(); title.name = "title"; title.attributeType = .stringAttributeType
        item.properties = [title]
        note.properties = [noteParent]
        task.properties = [taskParent]
        container.properties = [notes, tasks]
        item.subentities = [note, task]
        container.subentities = [folder, project]
        let model = NSManagedObjectModel()
        model.entities = [item, note, task, container, folder, project]
        let stack = try TestStack(model: model)
        let columns = try stack.rows("SELECT name FROM pragma_table_info('ZITEM')").map { $0[0] }
        let containerNumber = model.entitiesByName["Container"]!.layout.entityNumber
        #expect(Set(columns).isSuperset(of: ["ZPARENT", "ZPARENT1", "Z_FOK_PARENT", "Z_FOK_PARENT1",
                                             "Z\(containerNumber)_PARENT", "Z\(containerNumber)_PARENT1"]))
        // Both relationships work, each with its own order, also after reopening.
        let f = stack.insert("Folder"), p = stack.insert("Project")
        let n1 = stack.insert("Note", ["title": "n1"]), n2 = stack.insert("Note", ["title": "n2"])
        let t1 = stack.insert("Task", ["title": "t1"]), t2 = stack.insert("Task", ["title": "t2"])
        f.setValue(NSOrderedSet(array: [n2, n1]), forKey: "notes")
        p.setValue(NSOrderedSet(array: [t1, t2]), forKey: "tasks")
        try stack.context.save()
        let reopened = try stack.reopen()
        let folders = try reopened.fetch("Folder"), projects = try reopened.fetch("Project")
        #expect((folders.first?.value(forKey: "notes") as? NSOrderedSet)?.array.map { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == ["n2", "n1"])
        #expect((projects.first?.value(forKey: "tasks") as? NSOrderedSet)?.array.map { ($0 as? NSManagedObject)?.value(forKey: "title") as? String } == ["t1", "t2"])
    }

    @Test func entityNumbersAreDepthFirstInNameOrder() throws {
        let stack = try TestStack()
        let rows = try RawSQLite.query(stack.url.path, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        #expect(rows.map { $0[1]! } == ["Car", "Garage", "Person", "Playlist", "Song", "Tag", "Vehicle", "Bike", "Truck"])
        let vehicle = rows.first { $0[1] == "Vehicle" }![0]!
        #expect(rows.filter { $0[1] == "Bike" || $0[1] == "Truck" }.allSatisfy { $0[2] == vehicle })
        #expect(rows.allSatisfy { $0[3] == "0" })
    }

    @Test func indexesForKeysHierarchiesAndJoins() throws {
        let stack = try TestStack()
        let names = Set(try RawSQLite.query(stack.url.path, "SELECT name FROM sqlite_master WHERE type = 'index'").map { $0[0]! })
        #expect(names.contains("ZCAR_ZOWNER_INDEX"))
        #expect(names.contains("ZVEHICLE_Z_ENT_INDEX"))
        #expect(names.contains { $0.hasSuffix("TAGS_INDEX") && $0.hasPrefix("Z_") })
    }

    @Test func metadataIsABinaryPlistWithApplesKeys() throws {
        let stack = try TestStack()
        let row = try #require(try RawSQLite.query(stack.url.path, "SELECT Z_VERSION, Z_UUID, hex(Z_PLIST) FROM Z_METADATA").first)
        #expect(row[0] == "1")
        let uuid = try #require(row[1])
        #expect(uuid == stack.coordinator.persistentStores[0].identifier)
        #expect(row[2]!.hasPrefix("62706C6973743030"), "bplist00 header")
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: stack.url)
        #expect(metadata[NSStoreTypeKey] as? String == "SQLite")
        #expect(metadata[NSStoreUUIDKey] as? String == uuid)
        #expect(metadata["NSStoreModelVersionHashesVersion"] as? Int == 3)
        let hashes = try #require(metadata[NSStoreModelVersionHashesKey] as? [String: Any])
        #expect(hashes.count == stack.model.entities.count)
        #expect(hashes["Car"] as? Data == stack.model.entitiesByName["Car"]!.versionHash)
        #expect(metadata["NSStoreModelVersionHashesDigest"] as? String == VersionHash.hashesDigest(stack.model))
        #expect(metadata["NSStoreModelVersionChecksumKey"] as? String == stack.model.versionChecksum)
    }

    @Test func walJournalAndValueEncodings() throws {
        let stack = try TestStack()
        let vin = UUID()
        let built = Date(timeIntervalSinceReferenceDate: 123_456.5)
        stack.insert("Car", ["name": "Model T", "year": 1908, "price": 850.5, "built": built, "vin": vin, "electric": true,
                              "site": URL(string: "https://example.com/t")!, "photo": Data([1, 2, 3])])
        try stack.context.save()
        #expect(try RawSQLite.query(stack.url.path, "PRAGMA journal_mode").first?[0] == "wal")
        let row = try #require(try RawSQLite.query(stack.url.path,
            "SELECT ZNAME, ZYEAR, ZPRICE, ZBUILT, hex(ZVIN), ZELECTRIC, ZSITE, hex(ZPHOTO), Z_OPT, Z_ENT, typeof(ZBUILT), length(ZVIN) FROM ZCAR").first)
        #expect(row[0] == "Model T")
        #expect(row[1] == "1908")
        #expect(row[2] == "850.5")
        #expect(row[3] == "123456.5")
        #expect(row[4] == withUnsafeBytes(of: vin.uuid) { $0.map { String(format: "%02X", $0) }.joined() })
        #expect(row[5] == "1")
        #expect(row[6] == "https://example.com/t")
        #expect(row[7] == "010203")
        #expect(row[8] == "1")
        #expect(row[9] == String(stack.model.entitiesByName["Car"]!.layout.entityNumber))
        #expect(row[10] == "real")
        #expect(row[11] == "16")
    }

    @Test func primaryKeysFollowInsertionOrderAndZMax() throws {
        let stack = try TestStack()
        for i in 0..<50 { stack.insert("Car", ["name": "car \(i)"]) }
        try stack.context.save()
        let rows = try RawSQLite.query(stack.url.path, "SELECT Z_PK, ZNAME FROM ZCAR ORDER BY Z_PK")
        #expect(rows.map { $0[1]! } == (0..<50).map { "car \($0)" })
        #expect(rows.map { Int($0[0]!)! } == Array(1...50))
        let max = try RawSQLite.query(stack.url.path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Car'")
        #expect(max.first?[0] == "50")
        // Sub-entities take keys from their root's sequence.
        stack.insert("Truck", ["load": 3.5])
        stack.insert("Bike", ["load": 1])
        try stack.context.save()
        let vehicles = try RawSQLite.query(stack.url.path, "SELECT Z_PK FROM ZVEHICLE ORDER BY Z_PK").map { $0[0]! }
        #expect(vehicles == ["1", "2"])
        #expect(try RawSQLite.query(stack.url.path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Vehicle'").first?[0] == "2")
    }

    /// A store written by another Core Data (here: by hand, in Apple's layout) opens and reads.
    @Test func opensAStoreWrittenInApplesLayout() throws {
        let stack = try TestStack()
        stack.insert("Person", ["name": "Ada", "age": 36])
        try stack.context.save()
        let carNumber = stack.model.entitiesByName["Car"]!.layout.entityNumber
        // Rows added directly, as another implementation of the layout would write them.
        try RawSQLite.execute(stack.url.path, """
            INSERT INTO ZCAR (Z_PK, Z_ENT, Z_OPT, ZNAME, ZYEAR, ZOWNER, ZBUILT) VALUES (7, \(carNumber), 3, 'Jaguar', 1961, 1, 0.0);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 7 WHERE Z_NAME = 'Car';
            """)
        let other = try stack.reopen()
        let car = try #require(try other.fetch("Car").first)
        #expect(car.value(forKey: "name") as? String == "Jaguar")
        #expect(car.value(forKey: "year") as? Int == 1961)
        #expect(car.value(forKey: "built") as? Date == Date(timeIntervalSinceReferenceDate: 0))
        #expect((car.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "Ada")
        #expect(car.objectID.uriRepresentation().lastPathComponent == "p7")
        car.setValue("E-Type", forKey: "name")
        try other.context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT Z_OPT, ZNAME FROM ZCAR WHERE Z_PK = 7").first! == ["4", "E-Type"])
    }
    /// A many-to-many whose inverse is declared on a parent of its destination: the two sides
    /// named the join table's columns differently (`Z_3TAGS` and `Z_2TAGS`), so reading
    /// `tag.posts` failed with "no such column".
    @Test func aManyToManyWithItsInverseOnAParentEntityReadsFromBothSides() throws {
        let post = NSEntityDescription(); post.name = "Post"
        let tag = NSEntityDescription(); tag.name = "Tag"
        let special = NSEntityDescription(); special.name = "SpecialTag"
        tag.subentities = [special]
        let tags = ManagedTestModel.relationship("tags", to: special, toMany: true)
        let posts = ManagedTestModel.relationship("posts", to: post, toMany: true)
        tags.inverseRelationship = posts; posts.inverseRelationship = tags
        post.properties = [ManagedTestModel.attribute("title", .stringAttributeType), tags]
        tag.properties = [ManagedTestModel.attribute("label", .stringAttributeType), posts]
        let model = NSManagedObjectModel()
        model.entities = [post, tag, special]
        let stack = try TestStack(model: model)
        let first = stack.insert("Post", ["title": "first"])
        let swift = stack.insert("SpecialTag", ["label": "swift"])
        first.mutableSetValue(forKey: "tags").add(swift)
        try stack.context.save()
        let other = try stack.reopen()
        let tag2 = try #require(try other.fetch("SpecialTag").first)
        #expect((tag2.value(forKey: "posts") as? Set<NSManagedObject>)?.map { $0.value(forKey: "title") as? String } == ["first"])
        let post2 = try #require(try other.fetch("Post").first)
        #expect((post2.value(forKey: "tags") as? Set<NSManagedObject>)?.map { $0.value(forKey: "label") as? String } == ["swift"])
    }
    /// A many-to-many whose inverse has no destination stopped the process when the coordinator
    /// was made; adding a store refuses the model with an error instead.
    @Test func aManyToManyWithoutTheInversesDestinationIsAnError() throws {
        let item = NSEntityDescription(); item.name = "Item"
        let tag = NSEntityDescription(); tag.name = "Tag"
        let tags = ManagedTestModel.relationship("tags", to: tag, toMany: true)
        let items = NSRelationshipDescription(); items.name = "items" // (destination forgotten)
        tags.inverseRelationship = items; items.inverseRelationship = tags
        item.properties = [tags]
        tag.properties = [items]
        let model = NSManagedObjectModel()
        model.entities = [item, tag]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        #expect(throws: NSError.self) { try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil) }
    }
}
