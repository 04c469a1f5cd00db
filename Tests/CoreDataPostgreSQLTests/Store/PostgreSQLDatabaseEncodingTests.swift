import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// A store in a database whose encoding is not UTF8: it opens, saves and fetches; the fold
/// function and the localized collations, which are Unicode, are not created there, so a `[c]`
/// query and a localized sort throw 134091 saying the database must be UTF8
/// (`PostgreSQLDatabaseObjects.swift`).
@Suite("PostgreSQL store in a database not UTF8", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLDatabaseEncodingTests {
    @Test(arguments: ["LATIN1", "SQL_ASCII"])
    func aStoreOpensWithoutTheUnicodeFeatures(_ encoding: String) throws {
        let database = try TemporaryDatabase(encoding: encoding)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        try context.performAndWait {
            context.insert("Person", ["name": "Ann"])
            context.insert("Person", ["name": "Bob"])
            try context.save()
            context.reset()
            let plain = NSFetchRequest<NSManagedObject>(entityName: "Person")
            plain.predicate = NSPredicate(format: "name == %@", "Ann")
            #expect(try context.fetch(plain).map { $0.value(forKey: "name") as? String } == ["Ann"])

            let folded = NSFetchRequest<NSManagedObject>(entityName: "Person")
            folded.predicate = NSPredicate(format: "name ==[c] %@", "ann")
            let error = #expect(throws: NSError.self) { try context.fetch(folded) }
            #expect(error?.domain == NSCocoaErrorDomain)
            #expect(error?.code == 134091)
            #expect(error?.localizedDescription.contains("UTF8") == true)

            let sorted = NSFetchRequest<NSManagedObject>(entityName: "Person")
            sorted.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true, selector: "localizedCompare:")]
            let sortError = #expect(throws: NSError.self) { try context.fetch(sorted) }
            #expect(sortError?.code == 134091)
            #expect(sortError?.localizedDescription.contains("UTF8") == true)
        }
        #expect(try database.query("SELECT to_regprocedure('cd_fold_v1(text,integer)') IS NULL") == [["t"]])
    }

    /// A UTF8 database whose server refuses `CREATE FUNCTION` (an event trigger here; a policy or
    /// an extension there): the refusal is rolled back to its savepoint, the store opens, and a
    /// `[c]` query throws 134091.
    @Test func aRefusedCreateLeavesTheFunctionMissing() throws {
        let database = try TemporaryDatabase()
        let connection = try LibPQConnection(url: database.url, password: nil)
        try connection.run("""
            CREATE FUNCTION refuse() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
            CREATE EVENT TRIGGER refuse ON ddl_command_start WHEN TAG IN ('CREATE FUNCTION') EXECUTE FUNCTION refuse();
            """)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        try context.performAndWait {
            context.insert("Person", ["name": "Ann"])
            try context.save()
            let folded = NSFetchRequest<NSManagedObject>(entityName: "Person")
            folded.predicate = NSPredicate(format: "name ==[c] %@", "ann")
            let error = #expect(throws: NSError.self) { try context.fetch(folded) }
            #expect(error?.code == 134091)
        }
        #expect(try database.query("SELECT count(*) FROM \"ZPERSON\"") == [["1"]])
    }
}
