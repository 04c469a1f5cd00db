import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL

/// Results in binary read as the same values as results in text, for every column type the
/// store's tables have (and the few others a query may return).
@Suite("PostgreSQL: results in binary", PostgreSQLTestServer.skipUnlessServer)
struct LibPQBinaryResultsTests {
    /// The same query's rows in text and in binary.
    private func both(_ connection: LibPQConnection, _ sql: String, _ parameters: [PostgreSQLParameter] = []) throws -> (any PostgreSQLRows, any PostgreSQLRows) {
        (try connection.execute(sql, parameters, binaryResults: false), try connection.execute(sql, parameters, binaryResults: true))
    }

    @Test func integersFloatsAndBooleansReadAlike() throws {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        let (text, binary) = try both(connection, """
            SELECT 32767::smallint, (-32768)::smallint, 2147483647::integer, (-2147483648)::integer,
                   9223372036854775807::bigint, (-9223372036854775808)::bigint, true, false, 0::oid, 4000000000::oid,
                   0.1::float8, '-0'::float8, 'Infinity'::float8, '-Infinity'::float8, 1e-310::float8, 1.7976931348623157e308::float8,
                   2.5::float4, 42::bigint
            """)
        #expect(binary.count == 1 && binary.columnCount == 18)
        for column in 0..<10 {
            #expect(binary.text(0, column) == text.text(0, column), "column \(column)")
            // Booleans read as 1 and 0 in binary (text's `t` and `f` read as no number).
            if column != 6 && column != 7 { #expect(binary.int64(0, column) == text.int64(0, column), "column \(column)") }
        }
        #expect(binary.int64(0, 6) == 1 && binary.int64(0, 7) == 0)
        #expect(binary.int64(0, 4) == Int64.max && binary.int64(0, 5) == Int64.min)
        for column in 10..<17 {
            #expect(binary.double(0, column).bitPattern == text.double(0, column).bitPattern, "column \(column)")
        }
        #expect(binary.double(0, 17) == 42)
        let nan = try connection.execute("SELECT 'NaN'::float8", [], binaryResults: true)
        #expect(nan.double(0, 0).isNaN)
    }

    @Test func numericsReadAsTheServerWritesThem() throws {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        let values = ["0", "0.000", "1", "-1", "10000", "9999", "12345678901234567890.125", "-0.5", "0.0001", "0.00001234",
                      "1e-30", "-123.4500", "1e40", "99999999999999999999999999999999999999", "3.14159265358979323846",
                      "NaN", "Infinity", "-Infinity", "100000000.00000001"]
        for value in values {
            let (text, binary) = try both(connection, "SELECT $1::numeric", [.numeric(value)])
            #expect(binary.text(0, 0) == text.text(0, 0), "\(value)")
            let expected = text.double(0, 0)
            #expect(binary.double(0, 0) == expected || (expected.isNaN && binary.double(0, 0).isNaN), "\(value)")
        }
    }

    @Test func textBytesAndNullsReadAlike() throws {
        let connection = try LibPQConnection(url: PostgreSQLTestServer.url!, password: nil)
        let data = Data((0...255).map(UInt8.init))
        let (text, binary) = try both(connection, "SELECT $1::text, $2::bytea, $3::bytea, $4::text, NULL::bigint, ''::text",
                                      [.text("é 😀 \"q\" \\"), .bytes(data), .bytes(Data()), .null])
        #expect(binary.text(0, 0) == "é 😀 \"q\" \\" && text.text(0, 0) == binary.text(0, 0))
        #expect(binary.bytes(0, 1) == data && text.bytes(0, 1) == data)
        #expect(binary.bytes(0, 2).isEmpty && !binary.isNull(0, 2))
        #expect(binary.isNull(0, 3) && binary.isNull(0, 4) && !binary.isNull(0, 5))
        #expect(binary.text(0, 5) == "" && binary.int64(0, 4) == 0)
        // A row or column the result doesn't have reads as NULL.
        #expect(binary.isNull(1, 0) && binary.isNull(0, 6) && binary.int64(3, 9) == 0 && binary.bytes(0, 7).isEmpty)
    }
}
