import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// `executeAll`: many statements in a few round trips (libpq's pipeline mode), run in order, the
/// first failure's error thrown as running them one by one would throw it.
@Suite("PostgreSQL: statements in a pipeline", PostgreSQLTestServer.skipUnlessServer)
struct LibPQPipelineTests {
    private static let insert = "INSERT INTO t (k, i, d, s, b) VALUES ($1, $2, $3, $4, $5)"

    /// A connection to a new database with a table `t`.
    private func connection(_ database: TemporaryDatabase) throws -> LibPQConnection {
        let connection = try LibPQConnection(url: database.url, password: nil)
        try connection.run("CREATE TABLE t (k bigint PRIMARY KEY, i bigint, d float8, s text, b bytea)")
        return connection
    }

    private func row(_ k: Int64) -> PostgreSQLStatement {
        PostgreSQLStatement(sql: Self.insert, parameters: [.int(k), k % 3 == 0 ? .null : .int(-k), .double(Double(k) / 4),
                                                            .text("é\(k)"), k % 5 == 0 ? .null : .bytes(Data([UInt8(k & 0xff), 0]))])
    }

    @Test func thousandsOfStatementsGoInAFewRoundTripsInOrder() throws {
        let database = try TemporaryDatabase()
        let connection = try connection(database)
        try connection.run("CREATE TABLE log (n bigserial, k bigint)")
        let before = connection.roundTrips
        try connection.transaction {
            // Rows whose NULLs fall in other columns are other parameter types: other statements.
            try connection.executeAll((1...2_500).flatMap { k in
                [row(k), PostgreSQLStatement(sql: "INSERT INTO log (k) VALUES ($1)", parameters: [.int(k)])]
            })
        }
        // BEGIN, COMMIT, a few statements prepared, and three pipelines of at most 1,000 statements (5,000 one by one).
        #expect(connection.roundTrips - before <= 2 + 8 + 5)
        let rows = try connection.execute("SELECT k, i, d, s, b FROM t ORDER BY k", [])
        #expect(rows.count == 2_500)
        for index in [0, 1, 2, 4, 1_234, 2_499] {
            let k = Int64(index + 1)
            #expect(rows.int64(index, 0) == k)
            #expect(rows.isNull(index, 1) == (k % 3 == 0))
            if k % 3 != 0 { #expect(rows.int64(index, 1) == -k) }
            #expect(rows.double(index, 2) == Double(k) / 4)
            #expect(rows.text(index, 3) == "é\(k)")
            #expect(rows.isNull(index, 4) == (k % 5 == 0))
            if k % 5 != 0 { #expect(rows.bytes(index, 4) == Data([UInt8(k & 0xff), 0])) }
        }
        // They ran in the order given.
        let order = try connection.execute("SELECT count(*) FROM log a JOIN log b ON a.n < b.n AND a.k > b.k", [])
        #expect(order.int64(0, 0) == 0)
    }

    @Test func theFirstFailureIsThrownAndTheSessionGoesOn() throws {
        let database = try TemporaryDatabase()
        let connection = try connection(database)
        try connection.run("INSERT INTO t (k) VALUES (1500)")
        do {
            try connection.transaction { try connection.executeAll((1...2_000).map(row)) }
            Issue.record("a duplicate key was inserted")
        } catch let error as PostgreSQLError {
            #expect(error.sqlState == "23505")
            #expect(error.message.contains("(k)=(1500)"))
            #expect(error.message.contains("INSERT INTO t"))
            #expect(!error.isConnectionFailure)
        }
        #expect(try connection.execute("SELECT count(*) FROM t", []).int64(0, 0) == 1)
        // The connection is out of pipeline mode and runs the next statements as usual.
        try connection.transaction { try connection.executeAll([row(1), row(2)]) }
        #expect(try connection.execute("SELECT count(*) FROM t", []).int64(0, 0) == 3)
    }

    @Test func moreStatementsThanThePreparedCacheHoldsAllRun() throws {
        let database = try TemporaryDatabase()
        let connection = try connection(database)
        // 450 distinct statements, more than the 200 a connection keeps prepared.
        let statements = (1...450).map { k in
            PostgreSQLStatement(sql: "INSERT INTO t (k, i) VALUES ($1, \(k))", parameters: [.int(Int64(k))])
        }
        try connection.transaction { try connection.executeAll(statements) }
        #expect(try connection.execute("SELECT count(*) FROM t WHERE k = i", []).int64(0, 0) == 450)
        #expect(try connection.execute("SELECT count(*) FROM pg_prepared_statements", []).int64(0, 0) <= Int64(LibPQConnection.preparedStatementLimit) + 1)
    }
}
