import CSQLite
import Foundation

// The raw SQLite C API doing the benchmark's work: the baseline every ratio is taken against.
// This file must not import GRDB (its SQLite module wraps sqlite3.h too, and `sqlite3_*` would
// become ambiguous).

enum RawSQLiteBench {
    /// The SQLite library both raw SQLite and GRDB call (the system's libsqlite3).
    static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// One repetition of `workload` for `size` rows; `folder` hands out fresh files.
    static func repetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        switch workload {
        case .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates:
            return try predicateRepetition(workload, size: size, folder: folder)
        case .migrationAddAttribute, .migrationRenameAttribute, .migrationThroughManager:
            return try MigrationBench.rawRepetition(workload, size: size, folder: folder)
        case .batchUpdate, .batchDelete:
            return try BatchBench.rawRepetition(workload, size: size, folder: folder)
        case .historySave: // the baseline of (bh) is the library's own save without history
            return BatchBench.historySaveRepetition(history: false, size: size, folder: folder)
        case .fetchedResults:
            return FetchedResultsBench.rawRepetition(size: size, folder: folder)

        case .carsSavedOneByOne, .carsSavedOnce:
            let names = (0..<size).map { String($0) }
            let oneByOne = workload == .carsSavedOneByOne
            return {
                let file = folder.freshFile("raw-car")
                defer { BenchFolder.remove(file) }
                let db = try RawConnection(path: file.path)
                try db.execute("CREATE TABLE car (id INTEGER PRIMARY KEY, name TEXT)")
                let begin = try db.prepare("BEGIN IMMEDIATE")
                let commit = try db.prepare("COMMIT")
                let insert = try db.prepare("INSERT INTO car (name) VALUES (?)")
                defer { for statement in [begin, commit, insert] { sqlite3_finalize(statement) } }
                let sample = try BenchMeter.measure {
                    if !oneByOne { try db.run(begin) }
                    for name in names {
                        if oneByOne { try db.run(begin) }
                        var name = name
                        try name.withUTF8 { text in
                            _ = text.withMemoryRebound(to: CChar.self) { chars in
                                sqlite3_bind_text(insert, 1, chars.baseAddress, Int32(chars.count), nil) // SQLITE_STATIC
                            }
                            try db.run(insert)
                        }
                        if oneByOne { try db.run(commit) }
                    }
                    if !oneByOne { try db.run(commit) }
                    return names.count
                }
                let count = try db.scalar("SELECT count(*) FROM car")
                guard count == names.count else { throw BenchFailure("raw: \(count) car rows, expected \(names.count)") }
                return sample
            }

        case .insertItems, .insertItemsBoxed, .batchInsert:
            return {
                let file = folder.freshFile("raw-item")
                defer { BenchFolder.remove(file) }
                let db = try RawConnection(path: file.path)
                try db.execute(RawItem.createTable)
                let begin = try db.prepare("BEGIN IMMEDIATE")
                let commit = try db.prepare("COMMIT")
                let insert = try db.prepare(RawItem.insertSQL)
                defer { for statement in [begin, commit, insert] { sqlite3_finalize(statement) } }
                let sample = try BenchMeter.measure {
                    try db.run(begin)
                    for i in 0..<size {
                        let value = Int64(i)
                        for column in 1...Int32(10) { sqlite3_bind_int64(insert, column, value) }
                        try db.run(insert)
                    }
                    try db.run(commit)
                    return size
                }
                let count = try db.scalar("SELECT count(*) FROM item")
                guard count == size else { throw BenchFailure("raw: \(count) item rows, expected \(size)") }
                return sample
            }

        case .fetchItems, .fetchItemsBoxed:
            let file = folder.freshFile("raw-fetch")
            do {
                let db = try RawConnection(path: file.path)
                try db.execute(RawItem.createTable)
                try db.execute("BEGIN")
                let insert = try db.prepare(RawItem.insertSQL)
                for i in 0..<size {
                    for column in 1...Int32(10) { sqlite3_bind_int64(insert, column, Int64(i)) }
                    try db.run(insert)
                }
                sqlite3_finalize(insert)
                try db.execute("COMMIT")
            }
            return {
                let db = try RawConnection(path: file.path)
                return try BenchMeter.measure {
                    let select = try db.prepare("SELECT i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 FROM item")
                    defer { sqlite3_finalize(select) }
                    var items: [RawItem] = []
                    while true {
                        let rc = sqlite3_step(select)
                        if rc == SQLITE_DONE { break }
                        guard rc == SQLITE_ROW else { throw db.failure(rc, "step") }
                        items.append(RawItem(
                            i0: Int(sqlite3_column_int64(select, 0)), i1: Int(sqlite3_column_int64(select, 1)),
                            i2: Int(sqlite3_column_int64(select, 2)), i3: Int(sqlite3_column_int64(select, 3)),
                            i4: Int(sqlite3_column_int64(select, 4)), i5: Int(sqlite3_column_int64(select, 5)),
                            i6: Int(sqlite3_column_int64(select, 6)), i7: Int(sqlite3_column_int64(select, 7)),
                            i8: Int(sqlite3_column_int64(select, 8)), i9: Int(sqlite3_column_int64(select, 9))))
                    }
                    var sum = 0
                    for item in items {
                        sum &+= item.i0 &+ item.i1 &+ item.i2 &+ item.i3 &+ item.i4
                        sum &+= item.i5 &+ item.i6 &+ item.i7 &+ item.i8 &+ item.i9
                    }
                    return sum
                }
            }
        }
    }
}

/// The fetched objects of the raw fetch: a small class, as an app would have.
final class RawItem {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int

    init(i0: Int, i1: Int, i2: Int, i3: Int, i4: Int, i5: Int, i6: Int, i7: Int, i8: Int, i9: Int) {
        (self.i0, self.i1, self.i2, self.i3, self.i4) = (i0, i1, i2, i3, i4)
        (self.i5, self.i6, self.i7, self.i8, self.i9) = (i5, i6, i7, i8, i9)
    }

    /// GRDB's benchmark table.
    static let createTable = "CREATE TABLE item (i0 INT, i1 INT, i2 INT, i3 INT, i4 INT, i5 INT, i6 INT, i7 INT, i8 INT, i9 INT)"
    static let insertSQL = "INSERT INTO item (i0, i1, i2, i3, i4, i5, i6, i7, i8, i9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
}

/// A bare SQLite connection in WAL mode with `synchronous = NORMAL`, as the library opens its stores.
final class RawConnection {
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchFailure("raw: can't open \(path) (SQLite code \(rc))")
        }
        handle = db
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
    }

    deinit { sqlite3_close_v2(handle) }

    func failure(_ rc: Int32, _ what: String) -> BenchFailure {
        BenchFailure("raw: \(what): \(String(cString: sqlite3_errmsg(handle))) (SQLite code \(rc))")
    }

    func execute(_ sql: String) throws {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw failure(rc, sql) }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw failure(rc, "prepare \(sql)") }
        return statement
    }

    /// Steps a statement that returns no row, then resets it (bindings are kept).
    @inline(__always)
    func run(_ statement: OpaquePointer) throws {
        let rc = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard rc == SQLITE_DONE else { throw failure(rc, "step") }
    }

    func scalar(_ sql: String) throws -> Int {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw failure(sqlite3_errcode(handle), sql) }
        return Int(sqlite3_column_int64(statement, 0))
    }
}
