import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// `NSBatchInsertRequest` on the PostgreSQL store: the SQLite store's cases and expectations
/// (`BatchInsertRequestTests`), and values of every type through the arrays the rows are sent in.
@Suite("PostgreSQL batch insert requests", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLBatchInsertTests {
    static func cars(_ stack: PostgreSQLBatchStack) throws -> [[String: Any]] {
        let request = NSFetchRequest<NSDictionary>(entityName: "Car")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["name", "year", "electric", "price"]
        request.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
        return try stack.context.fetch(request).map { $0 as! [String: Any] }
    }

    @Test("objects: rows in the order given, defaults applied, every result type")
    func objectsForm() throws {
        let stack = try PostgreSQLBatchStack()
        let request = NSBatchInsertRequest(entityName: "Car", objects: [["name": "c", "price": 3.5], ["name": "a", "year": 1999], ["name": "b"]])
        request.resultType = .objectIDs
        let result = try #require(try stack.context.execute(request) as? NSBatchInsertResult)
        #expect(result.resultType == .objectIDs)
        let ids = try #require(result.result as? [NSManagedObjectID])
        #expect(ids.map { $0.primaryKey! } == [1, 2, 3])
        #expect(ids.allSatisfy { $0.entity.name == "Car" && !$0.isTemporaryID && $0.persistentStore === stack.coordinator.persistentStores[0] })
        #expect(ids.map { stack.context.object(with: $0).value(forKey: "name") as? String } == ["c", "a", "b"])
        let rows = try Self.cars(stack)
        #expect(rows.map { $0["year"] as? Int } == [1999, 2000, 2000])
        #expect(rows.map { $0["electric"] as? Bool } == [false, false, false])
        #expect(rows[2]["price"] as? Double == 3.5)

        let counted = NSBatchInsertRequest(entityName: "Car", objects: [["name": "d"], ["name": "e"]])
        counted.resultType = .count
        #expect((try stack.context.execute(counted) as? NSBatchInsertResult)?.result as? Int == 2)
        let status = NSBatchInsertRequest(entity: stack.model.entitiesByName["Car"]!, objects: [["name": "f"]])
        #expect((try stack.context.execute(status) as? NSBatchInsertResult)?.result as? Bool == true)
        let car = stack.insert("Car", ["name": "g"])
        try stack.context.save()
        #expect(car.objectID.primaryKey == 7)
        #expect(try stack.rows("SELECT \"Z_PK\", \"Z_ENT\", \"Z_OPT\", \"ZNAME\" FROM \"ZCAR\" ORDER BY 1").map { $0[0] + $0[2] + $0[3] }
                == ["11c", "21a", "31b", "41d", "51e", "61f", "71g"])
        // The save took a block of keys (7–106) for the context's next saves.
        #expect(try stack.rows("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Car'") == [["106"]])
    }

    @Test("Dictionary and managed-object handlers: called until they return true")
    func handlerForms() throws {
        let stack = try PostgreSQLBatchStack()
        var count = 0
        let byDictionary = NSBatchInsertRequest(entityName: "Person") { dictionary in
            guard count < 3 else { return true }
            count += 1
            dictionary["name"] = "p\(count)"
            dictionary["age"] = count * 10
            return false
        }
        byDictionary.resultType = .count
        #expect((try stack.context.execute(byDictionary) as? NSBatchInsertResult)?.result as? Int == 3)
        var made = 0
        let byObject = NSBatchInsertRequest(entity: stack.model.entitiesByName["Person"]!) { (object: NSManagedObject) in
            guard made < 2 else { return true }
            made += 1
            object.setValue("q\(made)", forKey: "name")
            return false
        }
        byObject.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(byObject) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.map { $0.primaryKey! } == [4, 5])
        let people = try stack.fetch("Person") { $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(people.map { $0.value(forKey: "name") as? String } == ["p1", "p2", "p3", "q1", "q2"])
        #expect(people.map { $0.value(forKey: "age") as? Int } == [10, 20, 30, 0, 0])
    }

    @Test("Uniqueness constraints make it an upsert: the stored row updated, its key kept")
    func upsert() throws {
        let stack = try PostgreSQLBatchStack(model: PostgreSQLBatchModel.constrained())
        let existing = stack.insert("Tag", ["label": "b"])
        try stack.context.save()
        let request = NSBatchInsertRequest(entityName: "Tag", objects: [["label": "a"], ["label": "b"], ["label": "c"], ["label": "a"]])
        request.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.map { $0.primaryKey! } == [2, 1, 3, 2])
        #expect(ids[1] == existing.objectID)
        #expect(try stack.fetch("Tag").count == 3)
        let counted = NSBatchInsertRequest(entityName: "Tag", objects: [["label": "c"], ["label": "d"]])
        counted.resultType = .count
        #expect((try stack.context.execute(counted) as? NSBatchInsertResult)?.result as? Int == 2)
        #expect(try stack.rows("SELECT \"Z_PK\", \"Z_OPT\", \"ZLABEL\" FROM \"ZTAG\" ORDER BY 1") == [["1", "2", "b"], ["2", "2", "a"], ["3", "2", "c"], ["4", "1", "d"]])
        #expect(try stack.rows("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Tag'") == [["4"]])
        // The context's object from before fails optimistic locking, as after another context's save.
        existing.setValue("z", forKey: "label")
        #expect(throws: NSError.self) { try stack.context.save() }
    }

    @Test("Refused rows: missing, wrong type, unknown key, relationship, unknown entity; nothing written")
    func validation() throws {
        let stack = try PostgreSQLBatchStack()
        func refusal(_ entity: String, _ rows: [[String: Any]]) -> NSError? {
            do {
                _ = try stack.context.execute(NSBatchInsertRequest(entityName: entity, objects: rows))
                return nil
            } catch {
                return error as NSError
            }
        }
        let missing = try #require(refusal("Person", [["name": "a"], ["age": 3]]))
        #expect(missing.domain == NSCocoaErrorDomain && missing.code == 1570)
        #expect(missing.userInfo[NSValidationKeyErrorKey] as? String == "name")
        #expect(missing.localizedDescription.contains("row 1"))
        let wrongType = try #require(refusal("Car", [["name": "a"], ["name": "b"], ["year": "soon"]]))
        #expect(wrongType.code == 1550 && wrongType.userInfo[NSValidationKeyErrorKey] as? String == "year")
        #expect(wrongType.localizedDescription.contains("row 2"))
        let unknown = try #require(refusal("Car", [["name": "a", "colour": "red"]]))
        #expect(unknown.code == 1550 && unknown.userInfo[NSValidationKeyErrorKey] as? String == "colour")
        let relationship = try #require(refusal("Car", [["name": "a", "owner": NSNull()]]))
        #expect(relationship.code == 1550 && relationship.localizedDescription.contains("relationship"))
        let entity = try #require(refusal("Boat", [["name": "a"]]))
        #expect(entity.domain == NSCocoaErrorDomain && entity.code == 134060)
        #expect(try stack.rows("SELECT count(*) FROM \"ZCAR\"") == [["0"]])
        #expect(try stack.rows("SELECT count(*) FROM \"ZPERSON\"") == [["0"]])
        #expect(try stack.rows("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" IN ('Car', 'Person')") == [["0"], ["0"]])
    }

    @Test("Values of every type, and strings an array literal must escape, come back as they were sent")
    func valuesOfEveryType() throws {
        let stack = try PostgreSQLBatchStack()
        let uuid = UUID()
        let strings = ["", "NULL", "a,b", "{x}", "quote \" and \\ backslash", "ünïcödé 🚗", " spaced ", "line\nbreak"]
        var objects: [[String: Any]] = strings.map { ["name": $0] }
        objects.append(["name": "full", "year": 2024, "price": -0.125, "built": Date(timeIntervalSinceReferenceDate: 123.456),
                        "vin": uuid, "photo": Data([0, 1, 0x5c, 0x22, 255]), "electric": true,
                        "site": URL(string: "https://example.com/a?b=c")!, "cost": Decimal(string: "12345678901234567890.125")!])
        objects.append(["name": "extremes", "price": Double.greatestFiniteMagnitude, "year": Int32.min])
        objects.append(["name": "empty data", "photo": Data()])
        let request = NSBatchInsertRequest(entityName: "Car", objects: objects)
        request.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        let reader = stack.newContext()
        let cars = ids.map { reader.object(with: $0) }
        #expect(cars.prefix(strings.count).map { $0.value(forKey: "name") as? String } == strings)
        let full = cars[strings.count]
        #expect(full.value(forKey: "year") as? Int == 2024)
        #expect(full.value(forKey: "price") as? Double == -0.125)
        #expect(full.value(forKey: "built") as? Date == Date(timeIntervalSinceReferenceDate: 123.456))
        #expect(full.value(forKey: "vin") as? UUID == uuid)
        #expect(full.value(forKey: "photo") as? Data == Data([0, 1, 0x5c, 0x22, 255]))
        #expect(full.value(forKey: "electric") as? Bool == true)
        #expect(full.value(forKey: "site") as? URL == URL(string: "https://example.com/a?b=c")!)
        #expect(full.value(forKey: "cost") as? Decimal == Decimal(string: "12345678901234567890.125")!)
        #expect(cars[strings.count + 1].value(forKey: "price") as? Double == Double.greatestFiniteMagnitude)
        #expect(cars[strings.count + 1].value(forKey: "year") as? Int == Int(Int32.min))
        #expect(cars[strings.count + 2].value(forKey: "photo") as? Data == Data())
        #expect(cars[0].value(forKey: "price") == nil && cars[0].value(forKey: "vin") == nil)
    }

    @Test("A batch larger than one statement: every row, keys in order, one Z_MAX")
    func manyRows() throws {
        let stack = try PostgreSQLBatchStack()
        var next = 0
        let request = NSBatchInsertRequest(entityName: "Car") { dictionary in
            guard next < 10_000 else { return true }
            next += 1
            dictionary["name"] = "car \(next)"
            dictionary["year"] = 1900 + next % 200
            return false
        }
        request.resultType = .objectIDs
        let ids = try #require((try stack.context.execute(request) as? NSBatchInsertResult)?.result as? [NSManagedObjectID])
        #expect(ids.map { $0.primaryKey! } == Array(1...10_000))
        #expect(try stack.rows("SELECT count(*), min(\"Z_PK\"), max(\"Z_PK\"), sum(\"ZYEAR\") FROM \"ZCAR\" WHERE \"ZNAME\" = 'car ' || \"Z_PK\"")
                == [["10000", "1", "10000", String((1...10_000).reduce(0) { $0 + 1900 + $1 % 200 })]])
        #expect(try stack.rows("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Car'") == [["10000"]])
    }

    @Test("A batch insert into a read-only store throws, nothing written")
    func readOnly() throws {
        let stack = try PostgreSQLBatchStack()
        let context = try stack.readOnlyContext()
        let error = try #require(throws: NSError.self) { try context.execute(NSBatchInsertRequest(entityName: "Car", objects: [["name": "a"]])) }
        #expect(error.domain == NSCocoaErrorDomain && error.code == 134030)
        #expect(try stack.rows("SELECT count(*) FROM \"ZCAR\"") == [["0"]])
    }

    /// A batch insert that PostgreSQL ends as a deadlock's victim (a trigger raises 40P01 at its
    /// first row, once: a sequence counts outside transactions) is not run again, as a save is:
    /// its handler has given its rows. It throws 134030 and inserts nothing; the caller's second
    /// request inserts every row once.
    @Test func aDeadlocksVictimThrowsAndInsertsNothing() throws {
        let stack = try PostgreSQLBatchStack()
        try stack.database.run("""
            CREATE SEQUENCE cd_attempts;
            CREATE FUNCTION cd_victim() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF nextval('cd_attempts') = 1 THEN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END IF; RETURN NEW; END $$;
            CREATE TRIGGER cd_victim BEFORE INSERT ON "ZCAR" FOR EACH ROW EXECUTE FUNCTION cd_victim();
            """)
        func threeCars() -> NSBatchInsertRequest {
            var count = 0
            let request = NSBatchInsertRequest(entityName: "Car") { dictionary in
                guard count < 3 else { return true }
                count += 1
                dictionary["name"] = "c\(count)"
                return false
            }
            request.resultType = .count
            return request
        }
        let error = try #require(throws: NSError.self) { try stack.context.execute(threeCars()) }
        #expect(error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreSaveError)
        #expect(error.userInfo[NSPostgreSQLStateErrorKey] as? String == "40P01")
        #expect(error.localizedDescription.contains("deadlock"))
        #expect(try stack.rows("SELECT count(*) FROM \"ZCAR\"") == [["0"]])

        #expect((try stack.context.execute(threeCars()) as? NSBatchInsertResult)?.result as? Int == 3)
        #expect(try stack.rows("SELECT \"Z_PK\", \"ZNAME\" FROM \"ZCAR\" ORDER BY 1") == [["1", "c1"], ["2", "c2"], ["3", "c3"]])
        #expect(try stack.rows("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Car'") == [["3"]])
    }
}
