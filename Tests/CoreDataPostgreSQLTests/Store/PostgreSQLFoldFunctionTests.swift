import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// `cd_fold_v1`, the SQL function through which the PostgreSQL store compares strings with
/// `[c]`/`[d]`: it folds every code point as Foundation does, alone and after a letter, and
/// random strings, except where docs/POSTGRESQL.md says it can't (``PostgreSQLFoldFunction/isExact(_:_:)``).
@Suite("cd_fold_v1 folds as Foundation", PostgreSQLTestServer.skipUnlessServer)
struct PostgreSQLFoldFunctionTests {
    /// A database with the store opened once (which creates the function), and a connection to it.
    private static func database() throws -> (TemporaryDatabase, LibPQConnection) {
        let database = try TemporaryDatabase()
        _ = try database.coordinator(PostgreSQLTestModel.make())
        return (database, try LibPQConnection(url: database.url, password: nil))
    }

    /// The server's folds of `strings`, in order.
    private static func serverFolds(_ strings: [String], _ options: Int, on connection: LibPQConnection) throws -> [String] {
        var literal = "{"
        for (index, string) in strings.enumerated() {
            if index > 0 { literal += "," }
            literal += "\"" + string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        literal += "}"
        let rows = try connection.execute(
            "SELECT cd_fold_v1(s, $2::integer) FROM unnest($1::text[]) WITH ORDINALITY AS u(s, n) ORDER BY n",
            [.text(literal), .int(Int64(options))]) as! LibPQRows
        return (0..<rows.count).map { rows.text($0, 0) }
    }

    /// Checks `strings` folded by the server against Foundation for `[c]`, `[d]` and `[cd]`, a few
    /// thousand per query; returns how many were skipped as not exact.
    @discardableResult
    private static func check(_ strings: [String], on connection: LibPQConnection) throws -> Int {
        var skipped = 0
        for raw in 1...3 {
            let options = ComparisonOptions(rawValue: raw)
            let exact = strings.filter { PostgreSQLFoldFunction.isExact($0, options) }
            skipped += strings.count - exact.count
            var start = 0
            while start < exact.count {
                let batch = Array(exact[start..<min(start + 4000, exact.count)])
                let folds = try serverFolds(batch, raw, on: connection)
                var mismatches = 0
                for (string, fold) in zip(batch, folds) where !fold.unicodeScalars.elementsEqual(PredicateStrings.fold(string, options).unicodeScalars) {
                    mismatches += 1
                    if mismatches <= 5 {
                        let hex = { (s: String) in s.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ") }
                        Issue.record("[\(raw)] \(hex(string)): server \(hex(fold)), Foundation \(hex(PredicateStrings.fold(string, options)))")
                    }
                }
                #expect(mismatches == 0, "options \(raw): \(mismatches) mismatches in a batch")
                start += batch.count
            }
        }
        return skipped
    }

    /// Every code point of the BMP and the assigned supplementary ones (not NUL, which text can't hold).
    private static let codePoints: [Unicode.Scalar] = (1...0x10FFFF).compactMap { value in
        guard let scalar = Unicode.Scalar(UInt32(value)) else { return nil }
        return value < 0x10000 || scalar.properties.generalCategory != .unassigned ? scalar : nil
    }

    @Test("Every code point alone folds as Foundation folds it")
    func everyCodePoint() throws {
        let (database, connection) = try Self.database()
        defer { connection.close(); _ = database }
        try Self.check(Self.codePoints.map { String($0) }, on: connection)
    }

    @Test("Every code point after a letter (a, É) folds as Foundation folds it")
    func afterALetter() throws {
        let (database, connection) = try Self.database()
        defer { connection.close(); _ = database }
        for base in ["a", "É"] {
            let skipped = try Self.check(Self.codePoints.map { base + String($0) }, on: connection)
            #expect(skipped == 0, "after \(base)")
        }
    }

    @Test("Random strings of letters, marks, expanding letters and other scripts fold as Foundation folds them")
    func randomStrings() throws {
        let (database, connection) = try Self.database()
        defer { connection.close(); _ = database }
        let alphabet: [String] = ["a", "Z", "é", "e\u{301}", "\u{301}", "\u{302}", "\u{345}", "ß", "ẞ", "İ", "ﬁ", "Σ", "ς", "Å", "\u{212B}",
                                  "Ǆ", "ǅ", "ŉ", "Ω", "Ḁ", "\u{1E9E}", "한", "中", "😀", "\u{94D}", "\u{200D}", " ", "-", "1", "Ⅻ", "ﬀ", "Ⱥ"]
        var generator = SystemRandomNumberGenerator()
        let strings = (0..<6000).map { _ in
            (0..<Int.random(in: 1...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
        }
        let skipped = try Self.check(strings, on: connection)
        #expect(skipped < strings.count, "every string skipped")
    }

    @Test("A role that can't create the function and collations opens the store; a [c] fetch or a localized sort then throws 134091 naming them")
    func roleWithoutCreatePrivilege() throws {
        let role = "cd_reader_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PostgreSQLTestServer.run("CREATE ROLE \"\(role)\" LOGIN")
        defer { try? PostgreSQLTestServer.run("DROP ROLE IF EXISTS \"\(role)\"") }
        do {
            let (database, connection) = try Self.database()
            defer { connection.close() }
            try connection.run("DROP FUNCTION cd_fold_v1(text, integer)")
            for row in try database.query("SELECT collname FROM pg_collation WHERE collname LIKE 'cd_localized_%'") {
                try connection.run("DROP COLLATION \"\(row[0]!)\"")
            }
            try connection.run("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \"\(role)\"")
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLTestModel.make())
            try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil,
                                               at: TemporaryDatabase.url(database: database.name, user: role), options: nil)
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait { () throws -> Void in
                let plain = try context.objects("Person", "name == 'x'")   // no [c]: answered
                #expect(plain.isEmpty)
                do {
                    _ = try context.objects("Person", "name ==[c] 'x'")
                    Issue.record("a [c] fetch was answered without the function")
                } catch let error as NSError {
                    #expect(error.domain == NSCocoaErrorDomain)
                    #expect(error.code == NSPersistentStoreUnsupportedRequestTypeError)
                    #expect(error.localizedDescription.contains("cd_fold_v1"))
                    #expect(error.localizedDescription.contains("CREATE privilege"))
                }
                let sorted = NSFetchRequest<NSManagedObject>(entityName: "Person")
                sorted.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true, selector: "localizedCompare:")]
                do {
                    _ = try context.fetch(sorted)
                    Issue.record("a localized sort was answered without its collation")
                } catch let error as NSError {
                    #expect(error.code == NSPersistentStoreUnsupportedRequestTypeError)
                    #expect(error.localizedDescription.contains("cd_localized_"))
                }
            }
            let found = try database.query("SELECT to_regprocedure('cd_fold_v1(text,integer)') IS NOT NULL")
            #expect(found == [["f"]])
            try connection.run("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM \"\(role)\"")
        }
    }

    @Test("Two stores opening a new database at once both open, and the function is there once")
    func concurrentOpenings() async throws {
        let database = try TemporaryDatabase()
        let url = database.url
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLTestModel.make())
                    try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: url, options: nil)
                }
            }
            try await group.waitForAll()
        }
        #expect(try database.query("SELECT count(*) FROM pg_proc WHERE proname = 'cd_fold_v1'") == [["1"]])
    }
}
