import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// Saves of two servers that change the same rows at the same time: they wait for each other
/// and never deadlock; the later one meets the earlier one's changes as a merge conflict.
@Suite("PostgreSQL concurrent saves", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLConcurrentSaveTests {
    /// Ann and Bob saved; then, at the same time, the first server deletes Ann and renames Bob
    /// while the second deletes Bob and renames Ann. Each save's first write waits (a trigger on
    /// `ZPERSON`) for an advisory lock the test holds until both saves wait, so that written in
    /// the contexts' order they would cross: the first holding Ann's row and wanting Bob's, the
    /// second holding Bob's and wanting Ann's. Returns the second save's error (`nil` if it
    /// saved) and the people left.
    private func crossingSaves(_ policy: Any) throws -> (error: NSError?, people: [[String?]]) {
        let database = try TemporaryDatabase()
        let (first, second) = try database.contextsOfTwoCoordinators(PostgreSQLTestModel.make())
        try first.performAndWait {
            first.insert("Person", ["name": "Ann"])
            first.insert("Person", ["name": "Bob"])
            try first.save()
        }
        for context in [first, second] {
            try context.performAndWait {
                context.mergePolicy = policy
                let people = try context.objects("Person", sortedBy: "name")
                if context === first {
                    context.delete(people[0])
                    people[1].setValue("Bobby", forKey: "name")
                } else {
                    context.delete(people[1])
                    people[0].setValue("Annie", forKey: "name")
                }
            }
        }
        try database.run("""
            CREATE FUNCTION cd_gate() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_advisory_xact_lock_shared(11); RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END; END $$;
            CREATE TRIGGER cd_gate BEFORE UPDATE OR DELETE ON "ZPERSON" FOR EACH ROW EXECUTE FUNCTION cd_gate();
            """)
        let gate = try LibPQConnection(url: database.url, password: nil)
        try gate.run("SELECT pg_advisory_lock(11)")
        let errors = Locked<[Int: NSError]>([:])
        let done = DispatchGroup()
        for (number, context) in [first, second].enumerated() {
            done.enter()
            context.perform {
                do { try context.save() } catch { errors.withLock { $0[number] = error as NSError } }
                done.leave()
            }
            // The first save is at the gate (or waiting for a row) before the second begins.
            try database.waitForSessionsWaitingOnLocks(number + 1)
        }
        try gate.run("SELECT pg_advisory_unlock(11)")
        #expect(done.wait(timeout: .now() + 60) == .success, "the saves did not end")
        gate.close()
        let found = errors.withLock { $0 }
        #expect(found[0] == nil, "the first save failed: \(String(describing: found[0]))")
        for error in found.values {
            #expect(error.code != NSPersistentStoreSaveError, "a save failed as a deadlock's victim: \(error)")
        }
        return (found[1], try database.query("SELECT \"ZNAME\" FROM \"ZPERSON\" ORDER BY 1"))
    }

    @Test func crossingSavesWaitAndMergeByTheErrorPolicy() throws {
        let (error, people) = try crossingSaves(NSErrorMergePolicy)
        #expect(error?.code == NSManagedObjectMergeError)
        #expect(people == [["Bobby"]])
    }

    /// The second save meets Ann deleted and Bob renamed. Its own changes win under the
    /// object-trump and overwrite policies (Bob deleted; Ann's rename can't revive her), the
    /// store's under the store-trump and rollback policies (Bobby stays).
    @Test(arguments: [("objectTrump", [String]()), ("overwrite", []), ("storeTrump", ["Bobby"]), ("rollback", ["Bobby"])])
    func crossingSavesWaitAndMergeByThePolicy(_ name: String, _ expected: [String]) throws {
        let (error, people) = try crossingSaves(TemporaryDatabase.mergePolicy(named: name))
        #expect(error == nil)
        #expect(people == expected.map { [$0] })
    }

    /// A save that PostgreSQL ends as a deadlock's victim (a trigger raises 40P01 at its first
    /// update, once: a sequence counts outside transactions) is run again and saves once.
    @Test func aDeadlocksVictimIsRunAgainBeforeCommitting() throws {
        let database = try TemporaryDatabase()
        let context = try database.context(saving: ["Ann"])
        try database.run("""
            CREATE SEQUENCE cd_attempts;
            CREATE FUNCTION cd_victim() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF nextval('cd_attempts') = 1 THEN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END IF; RETURN NEW; END $$;
            CREATE TRIGGER cd_victim BEFORE UPDATE ON "ZPERSON" FOR EACH ROW EXECUTE FUNCTION cd_victim();
            """)
        try context.performAndWait {
            try context.objects("Person")[0].setValue("Anna", forKey: "name")
            try context.save()
        }
        #expect(try database.query("SELECT \"ZNAME\", \"Z_OPT\" FROM \"ZPERSON\"") == [["Anna", "2"]])
        #expect(try database.query("SELECT last_value FROM cd_attempts") == [["2"]])
    }

    /// With persistent history, a save (which locks its rows, then history's key rows) and another
    /// server's batch update or delete of the same rows (which locks its rows first too) never
    /// wait for each other in a cycle. The save renames Ann and Bob and stops at a gate (a trigger
    /// on `ZPERSON`) holding both rows; the batch request on every person then waits for Ann's
    /// row; the gate opens: the save commits, then the batch request. The server counts no deadlock.
    @Test(arguments: ["update", "delete"])
    func aSaveAndABatchRequestOfTheSameRowsWithHistoryDoNotDeadlock(_ kind: String) throws {
        let database = try TemporaryDatabase()
        let tracking: [AnyHashable: Any] = [NSPersistentHistoryTrackingKey: true as NSNumber]
        let saving = try database.context(options: tracking, saving: ["Ann", "Bob"])
        let updating = try database.context(options: tracking, saving: [])
        try saving.performAndWait {
            let people = try saving.objects("Person", sortedBy: "name")
            people[0].setValue("Annie", forKey: "name")
            people[1].setValue("Bobby", forKey: "name")
        }
        try database.run("""
            CREATE FUNCTION cd_gate() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_advisory_xact_lock_shared(11); RETURN NEW; END $$;
            CREATE TRIGGER cd_gate BEFORE UPDATE ON "ZPERSON" FOR EACH ROW EXECUTE FUNCTION cd_gate();
            """)
        let gate = try LibPQConnection(url: database.url, password: nil)
        try gate.run("SELECT pg_advisory_lock(11)")
        let errors = Locked<[NSError]>([])
        let done = DispatchGroup()
        done.enter()
        saving.perform {
            do { try saving.save() } catch { errors.withLock { $0.append(error as NSError) } }
            done.leave()
        }
        try database.waitForSessionsWaitingOnLocks(1) // the save, holding both rows, at the gate
        done.enter()
        updating.perform {
            let update = NSBatchUpdateRequest(entityName: "Person")
            update.propertiesToUpdate = ["age": 7]
            let request: NSPersistentStoreRequest = kind == "update" ? update : NSBatchDeleteRequest(fetchRequest: NSFetchRequest<any NSFetchRequestResult>(entityName: "Person"))
            do { _ = try updating.execute(request) } catch { errors.withLock { $0.append(error as NSError) } }
            done.leave()
        }
        try database.waitForSessionsWaitingOnLocks(2) // the batch request, waiting for Ann's row
        try gate.run("SELECT pg_advisory_unlock(11)")
        #expect(done.wait(timeout: .now() + 60) == .success, "the save and the batch \(kind) did not end")
        gate.close()
        #expect(errors.withLock { $0 }.isEmpty)
        #expect(try database.query("SELECT \"ZNAME\", \"ZAGE\", \"Z_OPT\" FROM \"ZPERSON\" ORDER BY 1")
                == (kind == "update" ? [["Annie", "7", "3"], ["Bobby", "7", "3"]] : []))
        #expect(try database.query("SELECT count(*) FROM \"ATRANSACTION\"") == [["3"]])
        #expect(try database.deadlocksCounted(removingTheStoresOf: [saving, updating]) == 0)
    }
}
