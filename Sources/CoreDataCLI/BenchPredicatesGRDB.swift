import Foundation
import GRDB

// GRDB doing issue 4's predicate workloads, both ways the benchmark uses GRDB: `Record`
// subclasses with the query interface, and cached statements with row cursors. Both read one
// `product` table (the same schema and index as raw SQLite's), filled once per run (untimed).
// Every repetition opens a new `DatabasePool` and its reader connection (untimed) and runs all
// its queries in one `pool.read`. `bench_begins_cd` is registered on every connection of the pool, as a
// `DatabaseFunction` doing raw SQLite's folding. This file must not import CSQLite.

extension GRDBBench {
    static func predicateRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        try GRDBProduct.repetition(size: size, folder: folder) { data, db in
            var sum = 0
            switch workload {
            case .equalityFetch:
                for code in data.equalityCodes {
                    let products = try GRDBProduct.filter(Column("code") == code).order(Column("id")).fetchAll(db)
                    for product in products { sum &+= Int(product.amount) }
                }
            case .prefixSearch:
                for prefix in data.prefixes {
                    let folded = PredicateBench.folded(prefix)
                    let products = try GRDBProduct.filter(GRDBProduct.beginsWith(Column("name"), folded))
                        .order(Column("id")).limit(PredicateBench.prefixLimit).fetchAll(db)
                    for product in products { sum &+= Int(product.amount) }
                }
            case .lookupByID:
                for key in data.lookupKeys {
                    guard let product = try GRDBProduct.fetchOne(db, key: key) else { continue }
                    sum &+= Int(product.amount)
                }
            case .groupedAggregates:
                let amount = Column("amount")
                for _ in 0..<workload.queries(size: size) {
                    let groups = try GRDBProduct.select(Column("category"), GRDB.sum(amount), average(amount))
                        .group(Column("category")).asRequest(of: GRDBCategoryTotal.self).fetchAll(db)
                    for group in groups {
                        sum &+= PredicateBench.groupChecksum(category: group.category, sum: group.sum, average: group.average)
                    }
                }
            default:
                throw BenchFailure("\(workload.title) is not a predicate workload")
            }
            return sum
        }
    }
}

extension GRDBStatementBench {
    static func predicateRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        try GRDBProduct.repetition(size: size, folder: folder) { data, db in
            switch workload {
            case .equalityFetch:
                return try sumOfAmounts(db, PredicateBench.equalitySQL, data.equalityCodes)
            case .prefixSearch:
                return try sumOfAmounts(db, PredicateBench.prefixSQL, data.prefixes.map(PredicateBench.folded))
            case .lookupByID:
                return try sumOfAmounts(db, PredicateBench.lookupSQL, data.lookupKeys)
            case .groupedAggregates:
                var sum = 0
                let statement = try db.cachedStatement(sql: PredicateBench.groupSQL)
                for _ in 0..<workload.queries(size: size) {
                    var groups: [PredicateBench.GroupRow] = []
                    let rows = try Row.fetchCursor(statement)
                    while let row = try rows.next() {
                        groups.append(PredicateBench.GroupRow(category: row[0], sum: row[1], average: row[2]))
                    }
                    for group in groups { sum &+= PredicateBench.groupChecksum(category: group.category, sum: group.sum, average: group.average) }
                }
                return sum
            default:
                throw BenchFailure("\(workload.title) is not a predicate workload")
            }
        }
    }

    /// One query of `sql` per argument with a cached statement, the rows read by position into
    /// `ProductRow`s; the sum of their `amount`.
    private static func sumOfAmounts(_ db: Database, _ sql: String, _ arguments: [some DatabaseValueConvertible]) throws -> Int {
        let statement = try db.cachedStatement(sql: sql)
        var sum = 0
        for argument in arguments {
            var products: [PredicateBench.ProductRow] = []
            let rows = try Row.fetchCursor(statement, arguments: [argument])
            while let row = try rows.next() {
                products.append(PredicateBench.ProductRow(id: row[0], code: row[1], name: row[2], category: row[3], amount: row[4]))
            }
            for product in products { sum &+= Int(product.amount) }
        }
        return sum
    }
}

/// The product as a GRDB record (read only: the file is filled with statements).
final class GRDBProduct: Record {
    var id: Int64
    var code: String
    var name: String
    var category: String
    var amount: Int64

    override class var databaseTableName: String { "product" }

    /// `bench_begins_cd(name, foldedPrefix)`, as raw SQLite's (`RawSQLiteBench.registerBeginsWith`).
    static let beginsWith = DatabaseFunction("bench_begins_cd", argumentCount: 2, pure: true) { values in
        guard let name = String.fromDatabaseValue(values[0]), let prefix = String.fromDatabaseValue(values[1]) else { return false }
        return PredicateBench.hasFoldedPrefix(name, prefix)
    }

    required init(row: Row) throws {
        id = row["id"]
        code = row["code"]
        name = row["name"]
        category = row["category"]
        amount = row["amount"]
        try super.init(row: row)
    }

    /// A repetition of a predicate workload: each run opens a pool on the filled file with
    /// `bench_begins_cd` on every connection, and its reader connection (untimed), then times
    /// `work` in one `pool.read`.
    static func repetition(size: Int, folder: BenchFolder,
                           _ work: @escaping (PredicateBench.DataSet, Database) throws -> Int) throws -> BenchRepetition {
        let data = PredicateBench.data(rows: size, folder: folder)
        let file = try filledFile(data, folder: folder)
        return {
            var configuration = Configuration()
            configuration.prepareDatabase { db in db.add(function: GRDBProduct.beginsWith) }
            let pool = try DatabasePool(path: file.path, configuration: configuration)
            defer { try? pool.close() }
            try pool.read { _ in }
            return try BenchMeter.measure { try pool.read { db in try work(data, db) } }
        }
    }

    /// The file both GRDB engines read, filled once per run with cached-statement inserts (untimed).
    static func filledFile(_ data: PredicateBench.DataSet, folder: BenchFolder) throws -> URL {
        try folder.prepared("grdb-products-\(data.rows)") { () throws -> URL in
            let file = folder.freshFile("grdb-products")
            let pool = try DatabasePool(path: file.path)
            try pool.write { db in
                try db.execute(sql: PredicateBench.createTable)
                try db.execute(sql: PredicateBench.createIndex)
                let insert = try db.makeStatement(sql: PredicateBench.insertSQL)
                for row in 0..<data.rows {
                    try insert.execute(arguments: [row + 1, data.codes[row], data.names[row], data.categories[row], data.amounts[row]])
                }
            }
            try pool.close()
            return file
        }
    }
}

/// A group of (g) as a GRDB record: category, sum, average, by position.
struct GRDBCategoryTotal: FetchableRecord {
    var category: String
    var sum: Int64
    var average: Double

    init(row: Row) throws {
        category = row[0]
        sum = row[1]
        average = row[2]
    }
}
