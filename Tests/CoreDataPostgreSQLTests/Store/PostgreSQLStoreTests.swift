import CoreDataExamples
import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The PostgreSQL store: its layout, opening an existing store, saves and fetches through other
/// coordinators (as other servers would), and registration.
@Suite("PostgreSQL store", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLStoreTests {
    @Test func theLayoutIsCoreDatasInPostgreSQLTypes() throws {
        let database = try TemporaryDatabase()
        let coordinator = try database.coordinator(PostgreSQLTestModel.make())
        let columns = try database.query("""
            SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'ZPERSON' ORDER BY ordinal_position
            """)
        #expect(columns == [
            ["Z_PK", "bigint"], ["Z_ENT", "integer"], ["Z_OPT", "integer"], ["ZACTIVE", "integer"], ["ZAGE", "smallint"],
            ["ZBIG", "bigint"], ["ZRANK", "integer"], ["ZBORN", "double precision"], ["ZSCORE", "double precision"],
            ["ZWEIGHT", "double precision"], ["ZBALANCE", "numeric"], ["ZHOMEPAGE", "text"], ["ZNAME", "text"],
            ["ZIDENTIFIER", "bytea"], ["ZPHOTO", "bytea"],
        ])
        #expect(try database.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'ZCAR' ORDER BY ordinal_position")
            == [["Z_PK"], ["Z_ENT"], ["Z_OPT"], ["ZOWNER"], ["ZTOPSPEED"], ["ZNAME"]])
        #expect(try database.query("SELECT \"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\" FROM \"Z_PRIMARYKEY\" ORDER BY \"Z_ENT\"") == [
            ["1", "Car", "0", "0"], ["2", "SportsCar", "1", "0"], ["3", "Person", "0", "0"], ["4", "Pet", "0", "0"], ["5", "Tag", "0", "0"],
        ])
        let joins = try database.query("SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'Z\\_%' AND table_name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA')")
        #expect(joins.count == 1)
        let unique = try database.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'ZTAG' AND indexdef LIKE '%UNIQUE%' AND indexname <> 'ZTAG_pkey'")
        #expect(unique.count == 1)
        // Metadata: a binary plist of the store's type and the model's hashes, as the coordinator reads it.
        let metadata = coordinator.metadata(for: coordinator.persistentStores[0])
        #expect(metadata[NSStoreTypeKey] as? String == NSPostgreSQLStoreType)
        #expect((metadata[NSStoreModelVersionHashesKey] as? [String: Any])?.keys.sorted() == ["Car", "Person", "Pet", "SportsCar", "Tag"])
        #expect(try database.query("SELECT \"Z_UUID\" FROM \"Z_METADATA\"") == [[coordinator.persistentStores[0].identifier]])
    }

    @Test func stringColumnsAreByteOrderedAndFetchIndexesAreMade() throws {
        let database = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let car = model.entitiesByName["Car"]!
        car.indexes = [NSFetchIndexDescription(name: "byName", elements: [NSFetchIndexElementDescription(property: car.propertiesByName["name"]!, collationType: .binary)])]
        _ = try database.coordinator(model)
        // Text columns compare byte by byte whatever the database's collation, as the dialect's
        // comparisons and sorts do, so an index on them serves those.
        #expect(try database.query("""
            SELECT column_name, collation_name FROM information_schema.columns WHERE table_name = 'ZPERSON' AND data_type = 'text' ORDER BY column_name
            """) == [["ZHOMEPAGE", "C"], ["ZNAME", "C"]])
        // The fetch index, named as Apple's SQLite store names it (it was not made at all).
        #expect(try database.query("SELECT indexname FROM pg_indexes WHERE tablename = 'ZCAR' AND indexname LIKE 'Z\\_Car\\_%'") == [["Z_Car_byName"]])
    }

    /// Index names past PostgreSQL's 63 bytes, which it cuts: two that shared their first 63
    /// bytes made the store fail to open (42P07, 134080). They are shortened with a hash.
    @Test func longIndexNamesStayApart() throws {
        let database = try TemporaryDatabase()
        let record = NSEntityDescription(); record.name = "PatientMedicationAdministrationRecord"
        let ward = NSEntityDescription(); ward.name = "Ward"
        var properties: [NSPropertyDescription] = []
        for name in ["scheduledAdministrationNurse", "scheduledAdministrationWard"] {
            let to = NSRelationshipDescription(); to.name = name; to.destinationEntity = ward; to.maxCount = 1
            let back = NSRelationshipDescription(); back.name = name + "Records"; back.destinationEntity = record; back.maxCount = 0
            to.inverseRelationship = back; back.inverseRelationship = to
            properties.append(to)
            ward.properties += [back]
        }
        record.properties = properties
        let model = NSManagedObjectModel()
        model.entities = [record, ward]
        let coordinator = try database.coordinator(model)
        let names = try database.query("SELECT indexname FROM pg_indexes WHERE tablename = 'ZPATIENTMEDICATIONADMINISTRATIONRECORD' AND indexname <> 'ZPATIENTMEDICATIONADMINISTRATIONRECORD_pkey' ORDER BY 1").map { $0[0] ?? "" }
        #expect(names.count == 2 && Set(names).count == 2 && names.allSatisfy { $0.utf8.count <= 63 }, "\(names)")
        #expect(PostgreSQLLayout.indexName("Z_SHORT_INDEX") == "Z_SHORT_INDEX")
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let w = context.insert("Ward", [:])
        context.insert("PatientMedicationAdministrationRecord", ["scheduledAdministrationWard": w])
        try context.save()
    }

    @Test func valuesAndRelationshipsRoundTripThroughASecondCoordinator() throws {
        let database = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.persistentStoreCoordinator = try database.coordinator(model)
        let born = Date(timeIntervalSinceReferenceDate: 123_456.789)
        let identifier = UUID()
        let photo = Data([0, 1, 2, 0xff, 0])
        try writer.performAndWait {
            let ann = writer.insert("Person", [
                "name": "Ann ✓ 'x'", "age": 42, "rank": 7, "big": Int64.max, "score": 0.1, "weight": 1.5,
                "balance": Decimal(string: "12345678901234567890.125")!, "born": born, "photo": photo,
                "identifier": identifier, "homepage": URL(string: "https://example.com/ann?x=1")!, "active": true,
            ])
            let bob = writer.insert("Person", ["name": "Bob", "age": 30, "active": false])
            let red = writer.insert("Tag", ["label": "red"]), blue = writer.insert("Tag", ["label": "blue"])
            ann.setValue(Set([red, blue]), forKey: "tags")
            bob.setValue(Set([red]), forKey: "tags")
            writer.insert("Car", ["name": "beetle", "owner": ann])
            writer.insert("SportsCar", ["name": "gt", "topSpeed": 300, "owner": ann])
            let pets = ["rex", "tom", "kit"].map { writer.insert("Pet", ["name": $0]) }
            ann.setValue(NSOrderedSet(array: pets), forKey: "pets")
            try writer.save()
        }

        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = try database.coordinator(model)
        try reader.performAndWait {
            let people = try reader.objects("Person", sortedBy: "name")
            #expect(people.map { $0.value(forKey: "name") as? String } == ["Ann ✓ 'x'", "Bob"])
            let ann = people[0]
            #expect(ann.value(forKey: "age") as? Int16 == 42)
            #expect(ann.value(forKey: "rank") as? Int32 == 7)
            #expect(ann.value(forKey: "big") as? Int64 == Int64.max)
            #expect(ann.value(forKey: "score") as? Double == 0.1)
            #expect(ann.value(forKey: "weight") as? Float == 1.5)
            #expect(ann.value(forKey: "balance") as? Decimal == Decimal(string: "12345678901234567890.125"))
            #expect(ann.value(forKey: "born") as? Date == born)
            #expect(ann.value(forKey: "photo") as? Data == photo)
            #expect(ann.value(forKey: "identifier") as? UUID == identifier)
            #expect(ann.value(forKey: "homepage") as? URL == URL(string: "https://example.com/ann?x=1"))
            #expect(ann.value(forKey: "active") as? Bool == true)
            #expect(people[1].value(forKey: "active") as? Bool == false)
            #expect(people[1].value(forKey: "photo") == nil)
            // To-many (with a sub-entity's row), many-to-many both ways, ordered to-many in order.
            let cars = (ann.value(forKey: "cars") as! Set<NSManagedObject>)
            #expect(Set(cars.map { $0.entity.name! }) == ["Car", "SportsCar"])
            #expect(cars.first { $0.entity.name == "SportsCar" }?.value(forKey: "topSpeed") as? Int64 == 300)
            #expect(Set((ann.value(forKey: "tags") as! Set<NSManagedObject>).map { $0.value(forKey: "label") as! String }) == ["red", "blue"])
            let red = try reader.objects("Tag", "label == %@", ["red"])[0]
            #expect((red.value(forKey: "people") as! Set<NSManagedObject>).count == 2)
            #expect((ann.value(forKey: "pets") as! NSOrderedSet).array.map { ($0 as! NSManagedObject).value(forKey: "name") as! String } == ["rex", "tom", "kit"])
            // To-one through a fault, and the sub-entity's own fetch.
            let gt = try reader.objects("SportsCar")[0]
            #expect((gt.value(forKey: "owner") as? NSManagedObject)?.objectID == ann.objectID)
            #expect(try reader.objects("Car").count == 2)
            #expect(try reader.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")) == 2)
        }

        // Limits, offsets, batches, IDs, prefetching.
        try reader.performAndWait {
            reader.reset()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Pet")
            request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: false)]
            request.fetchOffset = 1
            request.fetchLimit = 1
            #expect(try reader.fetch(request).map { $0.value(forKey: "name") as? String } == ["rex"])
            #expect(try reader.count(for: request) == 1)
            let batched = NSFetchRequest<NSManagedObject>(entityName: "Pet")
            batched.fetchBatchSize = 2
            batched.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            #expect(try reader.fetch(batched).map { $0.value(forKey: "name") as? String } == ["kit", "rex", "tom"])
            let ids = NSFetchRequest<NSManagedObjectID>(entityName: "Tag")
            ids.resultType = .managedObjectIDResultType
            #expect(try reader.fetch(ids).count == 2)
            let prefetching = NSFetchRequest<NSManagedObject>(entityName: "Person")
            prefetching.relationshipKeyPathsForPrefetching = ["cars", "tags", "pets"]
            let people = try reader.fetch(prefetching)
            #expect(people.map { ($0.value(forKey: "cars") as! Set<NSManagedObject>).count }.sorted() == [0, 2])
        }

        // Changes and deletes travel too; a deleted person's join rows go with it.
        try writer.performAndWait {
            let bob = try writer.objects("Person", "name == %@", ["Bob"])[0]
            writer.delete(bob)
            let ann = try writer.objects("Person", "name == %@", ["Ann ✓ 'x'"])[0]
            ann.setValue(43, forKey: "age")
            try writer.save()
        }
        #expect(try database.query("SELECT count(*) FROM \"Z_3TAGS\"") == [["2"]])
        try reader.performAndWait {
            reader.reset()
            #expect(try reader.objects("Person").map { $0.value(forKey: "age") as? Int16 } == [43])
            let red = try reader.objects("Tag", "label == %@", ["red"])[0]
            #expect((red.value(forKey: "people") as! Set<NSManagedObject>).count == 1)
        }
    }

    /// A string with a NUL, which PostgreSQL's text cannot hold: `==` matches no row and `!=`
    /// every row, as `IN` already did (binding it failed the fetch with 134070).
    @Test func aStringWithANulEqualsNoStoredString() throws {
        let database = try TemporaryDatabase()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        try context.performAndWait {
            context.insert("Pet", ["name": "a"])
            try context.save()
            #expect(try context.objects("Pet", "name == %@", ["a\u{0}b"]).isEmpty)
            #expect(try context.objects("Pet", "name != %@", ["a\u{0}b"]).count == 1)
            #expect(try context.objects("Pet", "name IN %@", [["a\u{0}b"]]).isEmpty)
            // Nor does any stored string begin, end with or contain one, or match it as a LIKE pattern.
            for format in ["name BEGINSWITH %@", "name ENDSWITH %@", "name CONTAINS %@", "name LIKE %@", "name CONTAINS[cd] %@"] {
                #expect(try context.objects("Pet", format, ["a\u{0}b"]).isEmpty, "\(format)")
            }
            #expect(try context.objects("Pet", "NOT (name CONTAINS %@)", ["\u{0}"]).count == 1)
        }
    }

    @Test func whatTheDialectCannotCompileExactlyIsRefusedNotFiltered() throws {
        let database = try TemporaryDatabase()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        try context.performAndWait {
            context.insert("Pet", ["name": "Rex"])
            try context.save()
            #expect(try context.objects("Pet", "name BEGINSWITH %@", ["R"]).count == 1)
            #expect(try context.objects("Pet", "name CONTAINS %@", ["ex"]).count == 1)
            #expect(try context.objects("Pet", "name LIKE 'R*'").count == 1)
            #expect(try context.objects("Pet", "name MATCHES 'R.*'").count == 1)
            #expect(try context.objects("Pet", "name.length == 3").count == 1)
            #expect(try context.objects("Pet", "name ==[cd] 'RÉX'").count == 1)
            #expect(try context.objects("Pet", "canonical:(name) == 'rex'").count == 1)
            for format in ["name MATCHES[c] 'rex'", "name MATCHES '\\\\w+'"] {
                #expect(throws: NSError.self, "\(format)") { try context.objects("Pet", format) }
                do { _ = try context.objects("Pet", format) } catch let error as NSError {
                    #expect(error.code == NSPersistentStoreUnsupportedRequestTypeError)
                    #expect(error.localizedDescription.contains("PostgreSQL store"))
                }
            }
        }
    }

    @Test func serversOpeningANewDatabaseAtOnceShareOneStore() async throws {
        let database = try TemporaryDatabase()
        let url = database.url
        let identifiers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLTestModel.make())
                    return try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url).identifier
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(identifiers).count == 1)
        #expect(try database.query("SELECT count(*) FROM \"Z_METADATA\"") == [["1"]])
    }

    @Test func aStoreOfAnotherModelIsRefusedAndLeftUntouched() throws {
        let database = try TemporaryDatabase()
        _ = try database.coordinator(PostgreSQLTestModel.make())
        let before = try database.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
        let metadataBefore = try database.query("SELECT \"Z_UUID\", encode(\"Z_PLIST\", 'hex') FROM \"Z_METADATA\"")
        let other = PostgreSQLTestModel.make()
        let extra = NSAttributeDescription()
        extra.name = "nickname"
        extra.attributeType = .stringAttributeType
        other.entitiesByName["Pet"]!.properties.append(extra)
        do {
            _ = try database.coordinator(other)
            Issue.record("a store of another model opened")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSPersistentStoreIncompatibleVersionHashError)
            #expect(error.localizedDescription.contains("Pet (changed)"))
        }
        // Asked to migrate, it needs the model that wrote it (this one is made in code, so none
        // is found), as a SQLite store (the migrations: PostgreSQLLightweightMigrationTests).
        do {
            _ = try database.coordinator(other, options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true])
            Issue.record("a store of another model opened")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain && error.code == NSMigrationMissingSourceModelError)
        }
        #expect(try database.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1") == before)
        #expect(try database.query("SELECT \"Z_UUID\", encode(\"Z_PLIST\", 'hex') FROM \"Z_METADATA\"") == metadataBefore)
        // The same model opens it again.
        _ = try database.coordinator(PostgreSQLTestModel.make())
    }

    /// Ann saved with age 1 and score 1; another server changes age to 2 and score to 2 while
    /// this context changes name and age. Returns (name, age, score, Z_OPT) after this save.
    private func lockingConflict(_ policy: Any, databaseSettings: [String] = []) throws -> [String?] {
        let database = try TemporaryDatabase()
        for setting in databaseSettings { try PostgreSQLTestServer.run("ALTER DATABASE \"\(database.name)\" SET \(setting)") }
        let (context, other) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        let ann = try context.performAndWait {
            let ann = context.insert("Person", ["name": "Ann", "age": 1, "score": 1.0])
            try context.save()
            return ann
        }
        try other.performAndWait {
            let mirror = try other.objects("Person")[0]
            mirror.setValue(2, forKey: "age")
            mirror.setValue(2.0, forKey: "score")
            try other.save()
        }
        try context.performAndWait {
            ann.setValue("Anna", forKey: "name")
            ann.setValue(3, forKey: "age")
            context.mergePolicy = policy
            try context.save()
        }
        return try database.query("SELECT \"ZNAME\", \"ZAGE\", \"ZSCORE\", \"Z_OPT\" FROM \"ZPERSON\"")[0]
    }

    @Test func optimisticLockingConflictsBetweenTwoCoordinatorsFollowTheMergePolicy() throws {
        #expect(try lockingConflict(NSMergeByPropertyObjectTrumpMergePolicy) == ["Anna", "3", "2", "3"])
        #expect(try lockingConflict(NSMergeByPropertyStoreTrumpMergePolicy) == ["Anna", "2", "2", "3"])
        do {
            _ = try lockingConflict(NSErrorMergePolicy)
            Issue.record("the error policy saved over another server's change")
        } catch let error as NSError {
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.code == NSManagedObjectMergeError)
            let conflict = try #require((error.userInfo["conflictList"] as? [NSMergeConflict])?.first)
            #expect(conflict.cachedSnapshot?["age"] as? Int16 == 1)
            #expect(conflict.persistedSnapshot?["age"] as? Int16 == 2)
        }
    }

    /// A database (or role) configured with other defaults — `REPEATABLE READ` transactions,
    /// `bytea` in escape form, doubles with fewer digits — changes nothing: the store sets what
    /// it relies on in each session and transaction.
    @Test func theDatabasesDefaultsDoNotChangeLockingOrValues() throws {
        let settings = ["default_transaction_isolation = 'repeatable read'", "bytea_output = 'escape'", "extra_float_digits = 0"]
        #expect(try lockingConflict(NSMergeByPropertyObjectTrumpMergePolicy, databaseSettings: settings) == ["Anna", "3", "2", "3"])

        let database = try TemporaryDatabase()
        for setting in settings { try PostgreSQLTestServer.run("ALTER DATABASE \"\(database.name)\" SET \(setting)") }
        let (context, other) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        let photo = Data([0, 1, 0x5c, 0x27, 0xff, 0x80])
        let score = 0.1 + 0.2
        try context.performAndWait {
            _ = context.insert("Person", ["name": "Ann", "photo": photo, "score": score])
            try context.save()
        }
        try other.performAndWait {
            let ann = try other.objects("Person")[0]
            #expect(ann.value(forKey: "photo") as? Data == photo)
            #expect(ann.value(forKey: "score") as? Double == score)
        }
    }

    @Test func keysFromTwoCoordinatorsNeverCollide() async throws {
        let database = try TemporaryDatabase()
        let model = PostgreSQLTestModel.make()
        let coordinators = try (0..<2).map { _ in try database.coordinator(model) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, coordinator) in coordinators.enumerated() {
                group.addTask {
                    let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                    context.persistentStoreCoordinator = coordinator
                    try context.performAndWait {
                        for round in 0..<20 {
                            for item in 0..<5 { context.insert("Pet", ["name": "\(index)-\(round)-\(item)"]) }
                            if round % 4 == 0 {
                                // Keys handed out before the save, from the same sequence.
                                try context.obtainPermanentIDs(for: Array(context.insertedObjects))
                            }
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try database.query("SELECT count(*), count(DISTINCT \"Z_PK\") FROM \"ZPET\"") == [["200", "200"]])
        #expect(try database.query("SELECT \"Z_MAX\" >= 200 FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Pet'") == [["t"]])
    }

    @Test func aUniquenessConstraintConflictIsCoreDatas() throws {
        let database = try TemporaryDatabase()
        let (context, other) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        try other.performAndWait {
            other.insert("Tag", ["label": "red"])
            try other.save()
        }
        context.performAndWait {
            context.insert("Tag", ["label": "red"])
            do {
                try context.save()
                Issue.record("a second red tag was saved")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSManagedObjectConstraintMergeError)
            }
        }
        #expect(try database.query("SELECT count(*) FROM \"ZTAG\"") == [["1"]])
    }

    @Test func aUniqueIndexRefusalInTheSaveIsAConstraintConflict() throws {
        let database = try TemporaryDatabase()
        let coordinator = try database.coordinator(PostgreSQLTestModel.make())
        let store = try #require(coordinator.persistentStores.first as? PostgreSQLStore)
        let tag = coordinator.managedObjectModel.entitiesByName["Tag"]!
        var changes = SaveChanges()
        for key in [1, 2] as [Int64] {
            var values = tag.layout.nullValues()
            values[tag.layout.nameTable.index(of: "label")!] = .string("red")
            changes.inserts.append(SaveChanges.Insert(entity: tag, key: IDKey(store: store.tag, root: tag.layout.rootNumber, value: key), values: values))
        }
        #expect {
            _ = try store.save(changes, rowCache: nil, beforeCommitting: {})
        } throws: { error in
            let error = error as NSError
            return error.code == NSManagedObjectConstraintMergeError && error.userInfo[NSPostgreSQLStateErrorKey] as? String == "23505"
        }
        #expect(try database.query("SELECT count(*) FROM \"ZTAG\"") == [["0"]])
    }

    @Test func metadataIsReadWithoutAddingTheStore() throws {
        let database = try TemporaryDatabase()
        #expect(NSPersistentStoreCoordinator.registeredStoreTypes[NSPostgreSQLStoreType] != nil)
        do {
            _ = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: database.url)
            Issue.record("an empty database had metadata")
        } catch let error as NSError {
            #expect(error.code == NSFileReadNoSuchFileError)
        }
        #expect(try database.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'") == [["0"]])
        let coordinator = try database.coordinator(PostgreSQLTestModel.make())
        let metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: database.url)
        #expect(metadata[NSStoreUUIDKey] as? String == coordinator.persistentStores[0].identifier)
        #expect(metadata[NSStoreTypeKey] as? String == NSPostgreSQLStoreType)
        #expect(PostgreSQLTestModel.make().isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
    }

    @Test func metadataIsWrittenWithoutAddingTheStore() throws {
        let database = try TemporaryDatabase()
        func set(_ metadata: [String: Any]) throws {
            try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSPostgreSQLStoreType, at: database.url)
        }
        // No store in the database: 260, nothing made.
        #expect(throws: NSError.self) { try set(["app": 1]) }
        #expect(try database.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'") == [["0"]])
        let identifier = try database.coordinator(PostgreSQLTestModel.make()).persistentStores[0].identifier
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: database.url)
        metadata["importedFrom"] = "legacy"
        metadata[NSStoreUUIDKey] = nil
        try set(metadata)
        let read = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: database.url)
        // The store keeps its UUID and type.
        #expect(read["importedFrom"] as? String == "legacy" && read[NSStoreUUIDKey] as? String == identifier)
        #expect(read[NSStoreTypeKey] as? String == NSPostgreSQLStoreType)
        // A value that is not a property-list value: 3851, nothing written.
        let error = #expect(throws: NSError.self) { try set(["bad": NSObject()]) }
        #expect(error?.code == NSPropertyListWriteInvalidError)
        let after = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSPostgreSQLStoreType, at: database.url)
        #expect(after["importedFrom"] as? String == "legacy")
    }

    @Test func aContainerOpensAStoreDescriptionOfTheType() throws {
        let database = try TemporaryDatabase()
        let container = NSPersistentContainer(name: "Cars", managedObjectModel: PostgreSQLTestModel.make())
        let description = NSPersistentStoreDescription(url: database.url)
        description.type = NSPostgreSQLStoreType
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        try container.viewContext.performAndWait {
            container.viewContext.insert("Pet", ["name": "rex"])
            try container.viewContext.save()
        }
        #expect(try database.query("SELECT \"ZNAME\" FROM \"ZPET\"") == [["rex"]])
        #expect(container.persistentStoreCoordinator.persistentStores.first?.type == NSPostgreSQLStoreType)
    }
}
