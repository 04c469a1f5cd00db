import CLibPQ
import CoreData
import Foundation

// libpq's C API doing the benchmark's work on a PostgreSQL server: the baseline of
// `coredata bench --store postgres://…`, written as a client by hand would be: a table per
// workload in a fresh database, each statement prepared once (`PQprepare`) and run with
// parameters bound in binary (`PQexecPrepared`), one transaction per save, rows read from the
// text results into a small class. Creating the tables and filling the fetched ones is untimed.

enum RawPostgreSQLBench {
    /// One repetition of `workload` for `size` rows; `folder` hands out fresh databases.
    static func repetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        switch workload {
        case .carsSavedOneByOne, .carsSavedOnce:
            let names = (0..<size).map { String($0) }
            let oneByOne = workload == .carsSavedOneByOne
            return {
                try timedOnFreshDatabase(folder, "raw-car", table: "car", rows: names.count,
                                         create: "CREATE TABLE car (id bigserial PRIMARY KEY, name text)",
                                         insert: "INSERT INTO car (name) VALUES ($1)", types: [RawPQConnection.text]) { db in
                    let formats: [Int32] = [1] // binary: the text's bytes, with their length
                    if !oneByOne { try db.execute("BEGIN") }
                    for name in names {
                        if oneByOne { try db.execute("BEGIN") }
                        try name.withCString { text in
                            try db.runClearing("insert", [text], [Int32(strlen(text))], formats)
                        }
                        if oneByOne { try db.execute("COMMIT") }
                    }
                    if !oneByOne { try db.execute("COMMIT") }
                    return names.count
                }
            }

        case .insertItems, .insertItemsBoxed:
            return {
                try timedOnFreshDatabase(folder, "raw-item", table: "item", rows: size, create: createItems,
                                         insert: insertItem, types: Array(repeating: RawPQConnection.int8, count: 10)) { db in
                    let parameters = Int64Parameters(count: 10)
                    defer { parameters.deallocate() }
                    try db.execute("BEGIN")
                    for i in 0..<size {
                        for column in 0..<10 { parameters.set(column, Int64(i)) }
                        try db.runClearing("insert", parameters.values, parameters.lengths, parameters.formats)
                    }
                    try db.execute("COMMIT")
                    return size
                }
            }

        case .fetchItems, .fetchItemsBoxed:
            let database = try folder.prepared("raw-pg-fetch-\(size)") { () throws -> URL in
                let database = try folder.freshStore("raw-fetch")
                let db = try RawPQConnection(url: database)
                // Keyed as the store's table is, and read in key order: the order the store's
                // fetch gives (by `Z_PK`, insertion order) and raw SQLite's read gives (by rowid).
                try db.execute("CREATE TABLE item (id bigint PRIMARY KEY, i0 bigint, i1 bigint, i2 bigint, i3 bigint, i4 bigint, i5 bigint, i6 bigint, i7 bigint, i8 bigint, i9 bigint)")
                try db.execute("INSERT INTO item SELECT i + 1, i, i, i, i, i, i, i, i, i, i FROM generate_series(0, \(size - 1)) AS i")
                return database
            }
            return {
                let db = try RawPQConnection(url: database)
                try db.prepare("select", "SELECT i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 FROM item ORDER BY id", types: [])
                return try BenchMeter.measure {
                    let result = try db.run("select", [], [], [])
                    defer { PQclear(result) }
                    var items: [RawItem] = []
                    let count = PQntuples(result)
                    items.reserveCapacity(Int(count))
                    for row in 0..<count {
                        items.append(RawItem(
                            i0: Int(PQValue.int(result, row, 0)), i1: Int(PQValue.int(result, row, 1)),
                            i2: Int(PQValue.int(result, row, 2)), i3: Int(PQValue.int(result, row, 3)),
                            i4: Int(PQValue.int(result, row, 4)), i5: Int(PQValue.int(result, row, 5)),
                            i6: Int(PQValue.int(result, row, 6)), i7: Int(PQValue.int(result, row, 7)),
                            i8: Int(PQValue.int(result, row, 8)), i9: Int(PQValue.int(result, row, 9))))
                    }
                    var sum = 0
                    for item in items {
                        sum &+= item.i0 &+ item.i1 &+ item.i2 &+ item.i3 &+ item.i4
                        sum &+= item.i5 &+ item.i6 &+ item.i7 &+ item.i8 &+ item.i9
                    }
                    return sum
                }
            }

        case .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates:
            return try predicateRepetition(workload, size: size, folder: folder)

        default:
            throw BenchFailure("\(workload.title) does not run on PostgreSQL yet")
        }
    }

    static let createItems = "CREATE TABLE item (i0 bigint, i1 bigint, i2 bigint, i3 bigint, i4 bigint, i5 bigint, i6 bigint, i7 bigint, i8 bigint, i9 bigint)"
    static let insertItem = "INSERT INTO item (i0, i1, i2, i3, i4, i5, i6, i7, i8, i9) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"

    /// One timed run in a fresh database: the table is created and `insert` prepared (as
    /// `"insert"`) untimed, `work` is timed, then the rows of `table` are counted (untimed).
    static func timedOnFreshDatabase(_ folder: BenchFolder, _ stem: String, table: String, rows: Int, create: String,
                                     insert: String, types: [Oid], _ work: (RawPQConnection) throws -> Int) throws -> BenchSample {
        let database = try folder.freshStore(stem)
        defer { folder.removeStore(database) }
        let sample: BenchSample
        do {
            let db = try RawPQConnection(url: database)
            try db.execute(create)
            try db.prepare("insert", insert, types: types)
            sample = try BenchMeter.measure { try work(db) }
            let count = try db.scalar("SELECT count(*) FROM \(table)")
            guard count == rows else { throw BenchFailure("raw libpq: \(count) \(table) rows, expected \(rows)") }
        }
        return sample
    }

    // MARK: Issue 4's predicate workloads

    static func predicateRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        let data = PredicateBench.data(rows: size, folder: folder)
        let database = try folder.prepared("raw-pg-products-\(size)") { () throws -> URL in
            let database = try folder.freshStore("raw-products")
            let db = try RawPQConnection(url: database)
            try db.execute("CREATE TABLE product (id bigint PRIMARY KEY, code text, name text, category text, amount bigint)")
            try db.execute("CREATE INDEX product_code ON product (code)")
            try db.execute(PostgreSQLFoldFunction.createSQL)   // (e)'s [cd], as the store creates it
            try db.prepare("insert", "INSERT INTO product (id, code, name, category, amount) VALUES ($1, $2, $3, $4, $5)",
                           types: [RawPQConnection.int8, RawPQConnection.text, RawPQConnection.text, RawPQConnection.text, RawPQConnection.int8])
            try db.execute("BEGIN")
            for row in 0..<data.rows {
                let texts = [data.codes[row], data.names[row], data.categories[row]]
                var keys = [Int64(row + 1).bigEndian, data.amounts[row].bigEndian]
                try withTextParameters(texts) { pointers, lengths in
                    try keys.withUnsafeMutableBytes { raw in
                        let base = UnsafePointer(raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                        try db.runClearing("insert", [base, pointers[0], pointers[1], pointers[2], base + 8],
                                           [8, lengths[0], lengths[1], lengths[2], 8], [1, 1, 1, 1, 1])
                    }
                }
            }
            try db.execute("COMMIT; ANALYZE product")
            return database
        }
        return {
            let db = try RawPQConnection(url: database)
            let columns = "SELECT id, code, name, category, amount FROM product"
            switch workload {
            case .equalityFetch:
                try db.prepare("select", columns + " WHERE code = $1 ORDER BY id", types: [RawPQConnection.text])
                return try measureQueries(db, data.equalityCodes) { code, run in
                    try withTextParameters([code]) { pointers, lengths in try run(pointers, lengths) }
                }
            case .prefixSearch:
                return try measurePrefixSearches(db, data.prefixes, columns: columns)
            case .lookupByID:
                try db.prepare("select", columns + " WHERE id = $1", types: [RawPQConnection.int8])
                return try measureQueries(db, data.lookupKeys) { key, run in
                    var value = key.bigEndian
                    try withUnsafeBytes(of: &value) { raw in
                        try run([raw.baseAddress!.assumingMemoryBound(to: CChar.self)], [8])
                    }
                }
            case .groupedAggregates:
                try db.prepare("select", "SELECT category, sum(amount), avg(amount) FROM product GROUP BY category", types: [])
                return try BenchMeter.measure {
                    var sum = 0
                    for _ in 0..<workload.queries(size: size) {
                        let result = try db.run("select", [], [], [])
                        defer { PQclear(result) }
                        var groups: [PredicateBench.GroupRow] = []
                        for row in 0..<PQntuples(result) {
                            groups.append(PredicateBench.GroupRow(category: PQValue.text(result, row, 0), sum: PQValue.int(result, row, 1),
                                                                  average: PQValue.double(result, row, 2)))
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

    /// Times one run of the prepared `"select"` per argument (`bind` hands `run` the bound
    /// parameters), reading the rows into `ProductRow`s and adding up their `amount`.
    private static func measureQueries<Argument>(
        _ db: RawPQConnection, _ arguments: [Argument],
        bind: (Argument, ([UnsafePointer<CChar>?], [Int32]) throws -> Void) throws -> Void
    ) throws -> BenchSample {
        try BenchMeter.measure {
            var sum = 0
            for argument in arguments {
                try bind(argument) { values, lengths in
                    let result = try db.run("select", values, lengths, Array(repeating: 1, count: values.count))
                    defer { PQclear(result) }
                    sum &+= Self.sumOfAmounts(readProducts(result, rows: 0..<PQntuples(result)))
                }
            }
            return sum
        }
    }

    /// (e) with the fold the store uses, `cd_fold_v1` (which the store creates; made with the
    /// table here): the prefix folded in the client once per query, each name by the server.
    private static func measurePrefixSearches(_ db: RawPQConnection, _ prefixes: [String], columns: String) throws -> BenchSample {
        try db.prepare("select", columns + " WHERE strpos(\(PostgreSQLFoldFunction.name)(name, 3), $1) = 1 ORDER BY id LIMIT \(PredicateBench.prefixLimit)",
                       types: [RawPQConnection.text])
        return try measureQueries(db, prefixes) { prefix, run in
            try withTextParameters([PredicateBench.folded(prefix)]) { pointers, lengths in try run(pointers, lengths) }
        }
    }

    private static func readProducts(_ result: OpaquePointer, rows: Range<Int32>) -> [PredicateBench.ProductRow] {
        rows.map { row in
            PredicateBench.ProductRow(id: PQValue.int(result, row, 0), code: PQValue.text(result, row, 1), name: PQValue.text(result, row, 2),
                                      category: PQValue.text(result, row, 3), amount: PQValue.int(result, row, 4))
        }
    }

    private static func sumOfAmounts(_ products: [PredicateBench.ProductRow]) -> Int {
        products.reduce(0) { $0 &+ Int($1.amount) }
    }

    /// Runs `body` with C strings of `texts` and their lengths in bytes (binary `text` parameters).
    private static func withTextParameters<T>(_ texts: [String], _ body: ([UnsafePointer<CChar>?], [Int32]) throws -> T) throws -> T {
        let copies = texts.map { strdup($0)! }
        defer { copies.forEach { free($0) } }
        return try body(copies.map { UnsafePointer($0) }, copies.map { Int32(strlen($0)) })
    }
}

/// `count` binary `int8` parameters in one buffer, rebound in place.
struct Int64Parameters {
    private let buffer: UnsafeMutablePointer<Int64>
    let values: [UnsafePointer<CChar>?]
    let lengths: [Int32]
    let formats: [Int32]

    init(count: Int) {
        buffer = .allocate(capacity: count)
        buffer.initialize(repeating: 0, count: count)
        let base = UnsafeRawPointer(buffer)
        values = (0..<count).map { (base + $0 * 8).assumingMemoryBound(to: CChar.self) }
        lengths = Array(repeating: 8, count: count)
        formats = Array(repeating: 1, count: count)
    }

    @inline(__always)
    func set(_ index: Int, _ value: Int64) { buffer[index] = value.bigEndian }

    func deallocate() { buffer.deallocate() }
}
