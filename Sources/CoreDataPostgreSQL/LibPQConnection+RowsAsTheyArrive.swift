import CLibPQ
import CoreData
import Foundation

// A statement's rows read as they arrive: libpq's single-row mode. The client decodes each row
// while the server is still producing and sending the next ones, instead of waiting for the
// last before decoding the first (on a 200,000-row fetch, 100 ms of reading and 70 ms of
// decoding, one after the other, become one overlapping the other: BENCHMARKS.md).
extension LibPQConnection {
    /// ``PostgreSQLConnection/execute(_:_:rowsAsTheyArrive:)`` in single-row mode: `rows`
    /// holds one row a call.
    func execute(_ sql: String, _ parameters: [PostgreSQLParameter], rowsAsTheyArrive body: (any PostgreSQLRows) throws -> Void) throws {
        let sent = try withPrepared(sql, parameters) { name, count, values, lengths, formats in
            PQsendQueryPrepared(handle, name, count, values, lengths, formats, 0)
        }
        guard sent == 1 else {
            let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
            throw PostgreSQLError(message: "libpq can't send a statement: \(message) (running \(sql.prefix(200)))", sqlState: nil,
                                  isConnectionFailure: PQstatus(handle) != CONNECTION_OK)
        }
        // If single-row mode can't be set, the rows come in one result, lent whole.
        _ = PQsetSingleRowMode(handle)
        // One object for every row's result (replaced as each arrives), made with an empty one.
        let rows = LibPQRows(PQmakeEmptyPGresult(handle, PGRES_TUPLES_OK)!)
        var stopped: (any Error)? // `body`'s
        var failure: PostgreSQLError? // the statement's: the server's, or the session's
        // Every result is read, to the end, whatever happens: the session is then ready for
        // its next statement (after `body` throws, the rows left are read and dropped).
        while let result = PQgetResult(handle) {
            let status = PQresultStatus(result)
            guard status == PGRES_SINGLE_TUPLE || status == PGRES_TUPLES_OK else {
                if failure == nil { do { try check(result, sql: sql) } catch { failure = error } }
                PQclear(result)
                continue
            }
            guard stopped == nil, failure == nil else { PQclear(result); continue }
            rows.replace(with: result)
            guard rows.count > 0 else { continue }
            do { try body(rows) } catch { stopped = error }
        }
        // The statement's failure first, even when `body` stopped before it: it says what state
        // the session is in (lost, or its transaction aborted), which its pool must know.
        if let failure { throw failure }
        if let stopped { throw stopped }
    }
}
