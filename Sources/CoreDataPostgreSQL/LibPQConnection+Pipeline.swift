import CLibPQ
import CoreData
import Foundation

// Many statements in one round trip: libpq's pipeline mode (libpq 14 and later). The statements
// are prepared first, the usual way; then each is sent (`Bind`, `Execute`) without waiting for
// its result, then one `Sync`, and the results are read in order. A statement that fails aborts
// those after it (the server answers them PGRES_PIPELINE_ABORTED) and its error is the one
// thrown, as if the statements had been run one by one.
extension LibPQConnection {
    /// The most statements sent before their results are read: their results (about 25 bytes
    /// each for an `INSERT`) stay well within the socket's buffers.
    static let statementsPerPipeline = 1000

    func executeAllKeepingRows(_ statements: [PostgreSQLStatement]) throws(PostgreSQLError) -> [any PostgreSQLRows] {
        var kept: [any PostgreSQLRows] = []
        var encoded = LibPQParameters()
        var start = 0
        while start < statements.count {
            // Each pipeline's statements are prepared before it starts (libpq prepares nothing
            // synchronously inside one), at most half the cache's limit of them, so that none is
            // evicted before it runs.
            var names: [String] = []
            var previous: (sql: String, types: [Oid], name: String)?
            var prepared: Set<String> = []
            var end = start
            while end < statements.count, end - start < Self.statementsPerPipeline {
                encoded.encode(statements[end].parameters)
                if let previous, previous.sql == statements[end].sql, previous.types == encoded.types {
                    names.append(previous.name)
                } else {
                    guard prepared.count < Self.preparedStatementLimit / 2 else { break }
                    let name = try statementName(statements[end].sql, types: encoded.types)
                    prepared.insert(name)
                    previous = (statements[end].sql, encoded.types, name)
                    names.append(name)
                }
                end += 1
            }
            try pipeline(statements[start..<end], names: names, encoded: &encoded, keeping: &kept)
            start = end
        }
        return kept
    }

    /// Sends `statements` (prepared as `names`) in one pipeline and reads their results, adding
    /// the rows of those marked `returnsRows` to `kept`.
    private func pipeline(_ statements: ArraySlice<PostgreSQLStatement>, names: [String], encoded: inout LibPQParameters,
                          keeping kept: inout [any PostgreSQLRows]) throws(PostgreSQLError) {
        guard PQenterPipelineMode(handle) == 1 else { throw lost("can't enter pipeline mode", statements) }
        for (statement, name) in zip(statements, names) {
            encoded.encode(statement.parameters)
            let sent = encoded.withValues { values, lengths, formats in
                PQsendQueryPrepared(handle, name, Int32(statement.parameters.count), values, lengths, formats, 0)
            }
            // The server may have run some of them: the session can't go on.
            guard sent == 1 else { throw lost("can't send a statement", statements) }
        }
        guard PQpipelineSync(handle) == 1 else { throw lost("can't send a pipeline", statements) }
        roundTrips += 1
        var failure: PostgreSQLError?
        var index = statements.startIndex
        reading: while true {
            guard let result = PQgetResult(handle) else {
                // The end of one statement's results; more ends than statements: the session is gone.
                index += 1
                guard index <= statements.endIndex, PQstatus(handle) == CONNECTION_OK else { throw lost("lost the session", statements) }
                continue
            }
            switch PQresultStatus(result) {
            case PGRES_PIPELINE_SYNC:
                PQclear(result)
                break reading
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
                if index < statements.endIndex, statements[index].returnsRows {
                    kept.append(LibPQRows(result)) // which clears it
                } else {
                    PQclear(result)
                }
                continue
            case PGRES_PIPELINE_ABORTED:
                PQclear(result)
                continue
            default:
                defer { PQclear(result) }
                guard failure == nil else { continue }
                let sql = index < statements.endIndex ? statements[index].sql : statements[statements.startIndex].sql
                let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
                let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
                failure = PostgreSQLError(message: "\(message) (running \(sql.prefix(200)))", sqlState: state,
                                          isConnectionFailure: PQstatus(handle) != CONNECTION_OK)
            }
        }
        guard PQexitPipelineMode(handle) == 1 else { throw lost("can't leave pipeline mode", statements) }
        if let failure { throw failure }
    }

    /// The error of a pipeline that broke off: the session is in no state to go on.
    private func lost(_ what: String, _ statements: ArraySlice<PostgreSQLStatement>) -> PostgreSQLError {
        let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
        let sql = statements.first.map { String($0.sql.prefix(200)) } ?? ""
        return PostgreSQLError(message: "libpq \(what): \(message) (running \(sql))", sqlState: nil, isConnectionFailure: true)
    }
}

/// A statement's parameters as libpq takes them: in binary (text for `numeric`), typed, with
/// their lengths. Kept from one statement to the next, its arrays reused.
struct LibPQParameters {
    private(set) var types: [Oid] = []
    private var formats: [Int32] = []
    private var lengths: [Int32] = []
    /// Where each value starts in `buffer`, -1 for NULL.
    private var offsets: [Int] = []
    private var buffer: [UInt8] = []

    mutating func encode(_ parameters: [PostgreSQLParameter]) {
        types.removeAll(keepingCapacity: true)
        formats.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
        buffer.removeAll(keepingCapacity: true)
        for parameter in parameters {
            let start = buffer.count
            var format: Int32 = 1
            var offset = start
            switch parameter {
            case .null:
                types.append(0)
                offset = -1
            case .int(let value):
                types.append(20)
                withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
            case .double(let value):
                types.append(701)
                withUnsafeBytes(of: value.bitPattern.bigEndian) { buffer.append(contentsOf: $0) }
            case .text(let value):
                types.append(25)
                buffer.append(contentsOf: value.utf8)
            case .bytes(let value):
                types.append(17)
                buffer.append(contentsOf: value)
            case .numeric(let value):
                types.append(1700)
                format = 0
                buffer.append(contentsOf: value.utf8)
                buffer.append(0)
            }
            offsets.append(offset)
            formats.append(format)
            lengths.append(Int32(buffer.count - start))
        }
    }

    /// Calls `body` with the values' pointers (NULL for SQL NULL), lengths and formats.
    func withValues<T>(_ body: ([UnsafePointer<CChar>?], [Int32], [Int32]) -> T) -> T {
        buffer.withUnsafeBufferPointer { bytes in
            // A non-NULL pointer even for an empty value (libpq takes NULL for SQL NULL).
            var empty: UInt8 = 0
            return withUnsafePointer(to: &empty) { emptyPointer in
                let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                    guard offset >= 0 else { return nil }
                    let base = offset < bytes.count ? bytes.baseAddress! + offset : emptyPointer
                    return UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
                }
                return body(pointers, lengths, formats)
            }
        }
    }
}
