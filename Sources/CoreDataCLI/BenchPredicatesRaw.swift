import CSQLite
import Foundation

// The raw SQLite C API doing issue 4's predicate workloads: the baseline. The `product` table
// and its index on `code` are filled once per run (untimed); every repetition opens a new
// connection (untimed) and times its queries, each a statement prepared once in the timed part
// and then reused with new bindings, its rows read into `PredicateBench.ProductRow`s.
// This file must not import GRDB.

extension RawSQLiteBench {
    static func predicateRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        let data = PredicateBench.data(rows: size, folder: folder)
        let file = try folder.prepared("raw-products-\(size)") { () throws -> URL in
            let file = folder.freshFile("raw-products")
            let db = try RawConnection(path: file.path)
            try db.execute(PredicateBench.createTable)
            try db.execute(PredicateBench.createIndex)
            try db.execute("BEGIN")
            let insert = try db.prepare(PredicateBench.insertSQL)
            defer { sqlite3_finalize(insert) }
            for row in 0..<data.rows {
                sqlite3_bind_int64(insert, 1, Int64(row + 1))
                bindText(insert, 2, data.codes[row])
                bindText(insert, 3, data.names[row])
                bindText(insert, 4, data.categories[row])
                sqlite3_bind_int64(insert, 5, data.amounts[row])
                try db.run(insert)
            }
            try db.execute("COMMIT")
            return file
        }
        return {
            let db = try RawConnection(path: file.path)
            registerBeginsWith(on: db)
            switch workload {
            case .equalityFetch:
                return try db.measureQueries(PredicateBench.equalitySQL, data.equalityCodes) { select, code in
                    bindText(select, 1, code)
                }
            case .prefixSearch:
                // The prefix is folded once per query; `bench_begins_cd` folds each row's name.
                return try db.measureQueries(PredicateBench.prefixSQL, data.prefixes) { select, prefix in
                    bindText(select, 1, PredicateBench.folded(prefix))
                }
            case .lookupByID:
                return try db.measureQueries(PredicateBench.lookupSQL, data.lookupKeys) { select, key in
                    sqlite3_bind_int64(select, 1, key)
                }
            case .groupedAggregates:
                return try BenchMeter.measure {
                    let select = try db.prepare(PredicateBench.groupSQL)
                    defer { sqlite3_finalize(select) }
                    var sum = 0
                    for _ in 0..<workload.queries(size: size) {
                        var groups: [PredicateBench.GroupRow] = []
                        while try db.step(select) {
                            groups.append(PredicateBench.GroupRow(category: text(select, 0), sum: sqlite3_column_int64(select, 1),
                                                                  average: sqlite3_column_double(select, 2)))
                        }
                        for group in groups { sum &+= PredicateBench.groupChecksum(category: group.category, sum: group.sum, average: group.average) }
                    }
                    return sum
                }
            default:
                throw BenchFailure("\(workload.title) is not a predicate workload")
            }
        }
    }

    /// `bench_begins_cd(text, foldedPrefix)`: whether `text`, folded for `[cd]` as the library
    /// folds it (Foundation's `folding(options: [.caseInsensitive, .diacriticInsensitive])`),
    /// starts with `foldedPrefix`; `0` for a non-TEXT value.
    static func registerBeginsWith(on db: RawConnection) {
        sqlite3_create_function_v2(db.handle, "bench_begins_cd", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, count, values in
            guard let context, let values, count == 2, sqlite3_value_type(values[0]) == SQLITE_TEXT,
                  let name = sqlite3_value_text(values[0]), let prefix = sqlite3_value_text(values[1]) else {
                sqlite3_result_int(context, 0)
                return
            }
            let text = String(decoding: UnsafeBufferPointer(start: name, count: Int(sqlite3_value_bytes(values[0]))), as: UTF8.self)
            let folded = UnsafeRawBufferPointer(start: prefix, count: Int(sqlite3_value_bytes(values[1])))
            sqlite3_result_int(context, PredicateBench.hasFoldedPrefix(text, folded) ? 1 : 0)
        }, nil, nil, nil)
    }

    /// Binds a copy of `value` (`SQLITE_TRANSIENT`).
    static func bindText(_ statement: OpaquePointer, _ index: Int32, _ value: String) {
        _ = value.withCString { text in
            sqlite3_bind_text(statement, index, text, Int32(value.utf8.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
    }

    /// The TEXT of a column ("" for NULL).
    @inline(__always)
    static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }
}

extension RawConnection {
    /// Steps a statement that returns rows: `true` for a row; at the end, resets it and returns `false`.
    @inline(__always)
    func step(_ statement: OpaquePointer) throws -> Bool {
        let rc = sqlite3_step(statement)
        if rc == SQLITE_ROW { return true }
        sqlite3_reset(statement)
        guard rc == SQLITE_DONE else { throw failure(rc, "step") }
        return false
    }

    /// Times one query of `sql` per argument: prepared once, `bind` binds the argument, the rows
    /// are read into `ProductRow`s, and the checksum adds up their `amount`.
    func measureQueries<Argument>(_ sql: String, _ arguments: [Argument], bind: (OpaquePointer, Argument) -> Void) throws -> BenchSample {
        try BenchMeter.measure {
            let select = try prepare(sql)
            defer { sqlite3_finalize(select) }
            var sum = 0
            for argument in arguments {
                bind(select, argument)
                var products: [PredicateBench.ProductRow] = []
                while try step(select) {
                    products.append(PredicateBench.ProductRow(
                        id: sqlite3_column_int64(select, 0), code: RawSQLiteBench.text(select, 1), name: RawSQLiteBench.text(select, 2),
                        category: RawSQLiteBench.text(select, 3), amount: sqlite3_column_int64(select, 4)))
                }
                for product in products { sum &+= Int(product.amount) }
            }
            return sum
        }
    }
}
