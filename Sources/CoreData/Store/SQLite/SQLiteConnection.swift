import CSQLite
import Foundation

/// `SQLITE_TRANSIENT`: SQLite copies the text or blob (for SQL functions' results; statements'
/// parameters are copied into the statement's own buffers and bound `SQLITE_STATIC`).
internal let SQLITE_TRANSIENT_DESTRUCTOR = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One SQLite connection with its own cache of prepared statements. Not thread-safe: one thread
/// at a time uses it (the store's writer under its write lock; a reader while the reader pool
/// lends it). Every connection gets the predicate layer's SQL functions when it opens.
internal final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    private var statements: [String: SQLiteStatement] = [:]

    init(path: String, readOnly: Bool = false, create: Bool = true) throws {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
        if path.hasPrefix("file:") { flags |= SQLITE_OPEN_URI } // an in-memory store's database (SQLiteStore+Location.swift)
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteConnection.error(code: rc, message: "Can't open the store at \(path): \(message)", path: path)
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5_000)
        coredata_sqlite_strict_quotes(db)
        PredicateSQLCompiler.registerFunctions(on: db)
        SQLiteTriggerFunctions.register(on: db)
    }

    deinit {
        for statement in statements.values { statement.finalize() }
        sqlite3_close_v2(handle)
    }

    /// An `NSError` for a SQLite failure: `NSSQLiteError` (134180) in `NSCocoaErrorDomain`,
    /// with SQLite's own code under `NSSQLiteErrorDomain`.
    static func error(code: Int32, message: String, path: String? = nil) -> NSError {
        var info: [String: Any] = [NSSQLiteErrorDomain: Int(code), NSLocalizedDescriptionKey: message]
        if let path { info[NSFilePathErrorKey] = path }
        return NSError(domain: NSCocoaErrorDomain, code: NSSQLiteError, userInfo: info)
    }

    func lastError(_ code: Int32, _ context: String) -> NSError {
        Self.error(code: code, message: "\(context): \(String(cString: sqlite3_errmsg(handle))) (SQLite code \(code))", path: path)
    }

    /// Runs SQL that returns no rows (several statements allowed).
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "error"
            sqlite3_free(message)
            throw Self.error(code: rc, message: "\(text) (SQLite code \(rc)) in: \(sql.prefix(200))", path: path)
        }
    }

    /// A prepared statement for `sql`, reused across calls (reset and cleared before it is returned).
    func cached(_ sql: String) throws -> SQLiteStatement {
        if let statement = statements[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// How many prepared statements ``cached(_:)`` keeps (for tests).
    var cachedStatementCount: Int { statements.count }

    /// A new prepared statement that the caller finalizes.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw lastError(rc, "Can't prepare \(sql.prefix(200))") }
        return SQLiteStatement(stmt, connection: self)
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        try run(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            if !isAutocommit { try? run("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` in one read transaction, so that every statement in it reads the same
    /// snapshot of the file; inside a transaction already open (a pinned query generation's),
    /// in that one.
    func snapshot<T>(_ body: () throws -> T) throws -> T {
        isAutocommit ? try transaction(immediate: false, body) : try body()
    }

    /// Runs a parameterless statement through the statement cache (no parsing per call).
    private func run(_ sql: String) throws {
        let statement = try cached(sql)
        defer { sqlite3_reset(statement.stmt) }
        try statement.step()
    }

    /// Whether no transaction is open.
    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the row the connection last inserted.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// `PRAGMA data_version`: a number that changes when another connection (of this process or
    /// another) commits to the file, and never for this connection's own commits.
    func dataVersion() throws -> Int64 {
        try scalarInt("PRAGMA data_version") ?? 0
    }

    /// Single-value query helper.
    func scalarInt(_ sql: String) throws -> Int64? {
        let statement = try cached(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }
}

/// A prepared statement: bind values, step rows, read columns.
internal final class SQLiteStatement {
    let stmt: OpaquePointer
    unowned let connection: SQLiteConnection

    init(_ stmt: OpaquePointer, connection: SQLiteConnection) {
        self.stmt = stmt
        self.connection = connection
    }

    deinit {
        for buffer in bindBuffers { buffer.base?.deallocate() }
    }

    /// Memory the statement owns for its text and blob parameters, by parameter index: a value
    /// is copied here and bound without SQLite copying it again (`SQLITE_STATIC`), which saves
    /// SQLite an allocation and a free per value. A buffer stays valid until the next bind at
    /// its index (which binds the new value at once) or the statement's end.
    private struct BindBuffer {
        var base: UnsafeMutableRawPointer?
        var capacity = 0
    }
    @exclusivity(unchecked) private var bindBuffers: [BindBuffer] = []

    /// `bytes` copied into the buffer of parameter `index`, and bound as text or as a blob.
    private func bindCopy(_ bytes: UnsafeRawBufferPointer, at index: Int32, asText: Bool) {
        let slot = Int(index)
        if slot >= bindBuffers.count {
            bindBuffers.append(contentsOf: repeatElement(BindBuffer(), count: slot + 1 - bindBuffers.count))
        }
        var replaced: UnsafeMutableRawPointer?
        if bindBuffers[slot].capacity < bytes.count || bindBuffers[slot].base == nil {
            // The old buffer may still be bound: it is freed only once the new value is bound.
            replaced = bindBuffers[slot].base
            let capacity = max(bytes.count, 32)
            bindBuffers[slot] = BindBuffer(base: .allocate(byteCount: capacity, alignment: 8), capacity: capacity)
        }
        let base = bindBuffers[slot].base!
        if let source = bytes.baseAddress, bytes.count > 0 { base.copyMemory(from: source, byteCount: bytes.count) }
        if asText {
            _ = sqlite3_bind_text(stmt, index, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil) // SQLITE_STATIC
        } else {
            _ = sqlite3_bind_blob(stmt, index, base, Int32(bytes.count), nil) // SQLITE_STATIC
        }
        replaced?.deallocate()
    }

    func finalize() { sqlite3_finalize(stmt) }

    func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    /// Resets without clearing the bindings: for statements whose every parameter is bound
    /// before each step (the per-row `INSERT` of a save).
    func resetKeepingBindings() {
        sqlite3_reset(stmt)
    }

    /// Advances to the next row; `false` when done.
    @discardableResult
    func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw connection.lastError(rc, "Can't run \(String(cString: sqlite3_sql(stmt)).prefix(200))")
    }

    // MARK: Binding (1-based)

    func bindNull(_ index: Int32) { sqlite3_bind_null(stmt, index) }
    func bind(_ value: Int64, at index: Int32) { sqlite3_bind_int64(stmt, index, value) }
    func bind(_ value: Double, at index: Int32) { sqlite3_bind_double(stmt, index, value) }
    func bind(_ value: String, at index: Int32) {
        var value = value
        value.withUTF8 { bindCopy(UnsafeRawBufferPointer($0), at: index, asText: true) }
    }
    func bind(_ value: Data, at index: Int32) {
        value.withUnsafeBytes { buffer in
            if buffer.baseAddress != nil {
                bindCopy(buffer, at: index, asText: false)
            } else {
                _ = sqlite3_bind_zeroblob(stmt, index, 0)
            }
        }
    }

    /// Binds a value in Core Data's column encoding (inlined: a save's loops bind every value through it).
    @inline(__always)
    func bind(_ value: StoreValue, at index: Int32) {
        switch value {
        case .null: bindNull(index)
        case .int(let v): bind(v, at: index)
        case .bool(let v): bind(Int64(v ? 1 : 0), at: index)
        case .double(let v): bind(v, at: index)
        case .string(let v): bind(v, at: index)
        case .date(let v): bind(v.timeIntervalSinceReferenceDate, at: index)
        case .data(let v): bind(v, at: index)
        case .uuid(let v): bind(withUnsafeBytes(of: v.uuid) { Data($0) }, at: index)
        case .url(let v): bind(v.absoluteString, at: index)
        case .decimal(let v): bind(v.description, at: index)
        case .objectID(let id):
            if let pk = id.primaryKey { bind(pk, at: index) } else { bindNull(index) }
        case .object: bindNull(index) // transformed before binding; never reached
        }
    }

    // MARK: Columns (0-based)

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(stmt, column) == SQLITE_NULL }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(stmt, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(stmt, column) }
    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(stmt, column) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
    func data(_ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(stmt, column))
        guard count > 0, let blob = sqlite3_column_blob(stmt, column) else { return Data() }
        return Data(bytes: blob, count: count)
    }
    func columnType(_ column: Int32) -> Int32 { sqlite3_column_type(stmt, column) }
}
