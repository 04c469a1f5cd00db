import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// The PostgreSQL store's queries beyond what the differential predicate tests compare: `IN`
/// lists of any length, and the prepared statements a connection keeps.
@Suite("PostgreSQL queries", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLQueryTests {
    /// A list is one bound array per type of value, so it may hold more items than a statement
    /// takes parameters (65,535).
    @Test func anInListOf70000ItemsIsAnswered() throws {
        let database = try TemporaryDatabase()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        try context.performAndWait {
            for index in 0..<10 { context.insert("Person", ["name": "p\(index)", "big": Int64(index * 10)]) }
            try context.save()
            let numbers = (0..<70_000).map { Int64($0 * 3) } as [Any]
            // 0, 30, 60, 90 are multiples of 3.
            #expect(try context.objects("Person", "big IN %@", [numbers], sortedBy: "big").map { $0.value(forKey: "name") as? String }
                == ["p0", "p3", "p6", "p9"])
            #expect(try context.objects("Person", "NOT (big IN %@)", [numbers]).count == 6)
            let names = (0..<70_000).map { "p\($0 * 2)" } as [Any]
            #expect(try context.objects("Person", "name IN %@", [names]).count == 5)
            // Integers and doubles in one list against an integer attribute; nil matches nothing here.
            #expect(try context.objects("Person", "big IN %@", [[10, 20.0, 30.5, NSNull()] as [Any]]).count == 2)
        }
    }

    /// `uppercase:`, `lowercase:` and `length:` of stored strings are Swift's `uppercased()`,
    /// `lowercased()` and `utf16.count`: full mappings (`ß` → `SS`), `Σ` → `σ` also at the end of a
    /// word (ICU's contextual final sigma is not Swift's), surrogate pairs counted twice.
    @Test func stringFunctionsAreSwifts() throws {
        let database = try TemporaryDatabase()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(PostgreSQLTestModel.make())
        let names = ["ΟΔΟΣ", "Σ", "straße", "ǅ", "İstanbul", "ﬁx", "ŉ", "😀x", "e\u{301}", "ΆΣ ΣΑ"]
        try context.performAndWait {
            for name in names { context.insert("Person", ["name": name]) }
            try context.save()
            for name in names {
                for (function, value) in [("uppercase:", name.uppercased()), ("lowercase:", name.lowercased())] {
                    let found = try context.objects("Person", "\(function)(name) == %@", [value]).compactMap { $0.value(forKey: "name") as? String }
                    #expect(found.contains(name), "\(function)(\(name)) is not \(value): \(found)")
                }
                #expect(try context.objects("Person", "name == %@ AND name.length == %@", [name, name.utf16.count]).count == 1, "\(name)")
            }
        }
    }

    /// Each connection keeps at most `preparedStatementLimit` statements prepared; one used
    /// again after it was deallocated is prepared anew.
    @Test func preparedStatementsStayBounded() throws {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        let limit = LibPQConnection.preparedStatementLimit
        for index in 0..<(limit + 50) {
            let rows = try connection.execute("SELECT $1::bigint + \(index)", [.int(1)])
            #expect(rows.int64(0, 0) == Int64(index + 1))
        }
        let count = try connection.execute("SELECT count(*) FROM pg_prepared_statements", [])
        #expect(count.int64(0, 0) <= Int64(limit))
        #expect(try connection.execute("SELECT $1::bigint + 0", [.int(7)]).int64(0, 0) == 7)
        #expect(try connection.execute("SELECT $1::bigint + \(limit + 49)", [.int(1)]).int64(0, 0) == Int64(limit + 50))
    }
}
