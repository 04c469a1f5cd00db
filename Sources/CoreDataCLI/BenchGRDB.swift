import Foundation
import GRDB

// GRDB doing the benchmark's work, the way GRDB's own performance tests do it
// (Tests/Performance/GRDBPerformance/{InsertRecordClass,FetchRecordClass}Tests.swift, v7.10.0):
// `Record` subclasses inserted in one write, and `fetchAll` of a `Record` subclass.
// A `DatabasePool` is used: WAL mode with `synchronous = NORMAL` (GRDB sets both for a pool),
// one writer connection and reader connections, the setup a Core Data stack needs in part 2.
// This file must not import CSQLite.

enum GRDBBench {
    /// One repetition of `workload` for `size` rows; `folder` hands out fresh files.
    static func repetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        switch workload {
        case .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates:
            return try predicateRepetition(workload, size: size, folder: folder)
        case .migrationAddAttribute, .migrationRenameAttribute, .migrationThroughManager:
            return migrationRepetition(workload, size: size, folder: folder, statements: false)
        case .batchUpdate, .batchDelete:
            return batchRepetition(workload, size: size, folder: folder, statements: false)
        case .fetchedResults:
            return fetchedResultsRepetition(size: size, folder: folder, stem: "grdb-frc")

        case .carsSavedOneByOne, .carsSavedOnce:
            let names = (0..<size).map { String($0) }
            let oneByOne = workload == .carsSavedOneByOne
            return {
                try timedOnFreshPool(folder, "grdb-car", create: GRDBCar.createTable, table: "car", rows: names.count, engine: "GRDB") { pool in
                    if oneByOne {
                        for name in names {
                            try pool.write { db in try GRDBCar(name: name).insert(db) }
                        }
                    } else {
                        try pool.write { db in
                            for name in names { try GRDBCar(name: name).insert(db) }
                        }
                    }
                    return names.count
                }
            }

        case .insertItems, .insertItemsBoxed, .batchInsert, .historySave:
            return {
                try timedOnFreshPool(folder, "grdb-item", create: GRDBItem.createTable, table: "item", rows: size, engine: "GRDB") { pool in
                    try pool.write { db in
                        for i in 0..<size {
                            try GRDBItem(i0: i, i1: i, i2: i, i3: i, i4: i, i5: i, i6: i, i7: i, i8: i, i9: i).insert(db)
                        }
                    }
                    return size
                }
            }

        case .fetchItems, .fetchItemsBoxed:
            let file = folder.freshFile("grdb-fetch")
            do { // The rows, written beforehand (not timed), as GRDB's generateSQLiteDatabaseIfMissing does.
                let pool = try DatabasePool(path: file.path)
                try pool.write { db in
                    try db.execute(sql: GRDBItem.createTable)
                    let statement = try db.makeStatement(sql: "INSERT INTO item (i0, i1, i2, i3, i4, i5, i6, i7, i8, i9) VALUES (?,?,?,?,?,?,?,?,?,?)")
                    for i in 0..<size { try statement.execute(arguments: [i, i, i, i, i, i, i, i, i, i]) }
                }
                try pool.close()
            }
            return {
                let pool = try DatabasePool(path: file.path)
                defer { try? pool.close() }
                return try BenchMeter.measure {
                    let items = try pool.read { db in try GRDBItem.fetchAll(db) }
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

/// GRDB's statement layer doing the same work: cached prepared statements executed with
/// arguments, and a row cursor read by position. This is the part of GRDB the library would
/// use if it talked to SQLite through GRDB, so its ratio to raw SQLite is the cost GRDB would add.
enum GRDBStatementBench {
    static func repetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        switch workload {
        case .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates:
            return try predicateRepetition(workload, size: size, folder: folder)
        case .migrationAddAttribute, .migrationRenameAttribute, .migrationThroughManager:
            return migrationRepetition(workload, size: size, folder: folder, statements: true)
        case .batchUpdate, .batchDelete:
            return batchRepetition(workload, size: size, folder: folder, statements: true)
        case .fetchedResults:
            return fetchedResultsRepetition(size: size, folder: folder, stem: "grdb-sql-frc")

        case .carsSavedOneByOne, .carsSavedOnce:
            let names = (0..<size).map { String($0) }
            let oneByOne = workload == .carsSavedOneByOne
            let sql = "INSERT INTO car (name) VALUES (?)"
            return {
                try timedOnFreshPool(folder, "grdb-sql-car", create: GRDBCar.createTable, table: "car", rows: names.count, engine: "GRDB statements") { pool in
                    if oneByOne {
                        for name in names {
                            try pool.write { db in try db.cachedStatement(sql: sql).execute(arguments: [name]) }
                        }
                    } else {
                        try pool.write { db in
                            let statement = try db.cachedStatement(sql: sql)
                            for name in names { try statement.execute(arguments: [name]) }
                        }
                    }
                    return names.count
                }
            }

        case .insertItems, .insertItemsBoxed, .batchInsert, .historySave:
            return {
                try timedOnFreshPool(folder, "grdb-sql-item", create: GRDBItem.createTable, table: "item", rows: size, engine: "GRDB statements") { pool in
                    try pool.write { db in
                        let statement = try db.cachedStatement(sql: RawItem.insertSQL)
                        for i in 0..<size { try statement.execute(arguments: [i, i, i, i, i, i, i, i, i, i]) }
                    }
                    return size
                }
            }

        case .fetchItems, .fetchItemsBoxed:
            let file = folder.freshFile("grdb-sql-fetch")
            do {
                let pool = try DatabasePool(path: file.path)
                try pool.write { db in
                    try db.execute(sql: GRDBItem.createTable)
                    let statement = try db.makeStatement(sql: RawItem.insertSQL)
                    for i in 0..<size { try statement.execute(arguments: [i, i, i, i, i, i, i, i, i, i]) }
                }
                try pool.close()
            }
            return {
                let pool = try DatabasePool(path: file.path)
                defer { try? pool.close() }
                return try BenchMeter.measure {
                    let items = try pool.read { db in
                        var items: [RawItem] = []
                        let rows = try Row.fetchCursor(db, sql: "SELECT i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 FROM item")
                        while let row = try rows.next() {
                            items.append(RawItem(i0: row[0], i1: row[1], i2: row[2], i3: row[3], i4: row[4],
                                                 i5: row[5], i6: row[6], i7: row[7], i8: row[8], i9: row[9]))
                        }
                        return items
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

/// Seed 000's car as a GRDB record.
final class GRDBCar: Record {
    var name: String

    override class var databaseTableName: String { "car" }
    static let createTable = "CREATE TABLE car (id INTEGER PRIMARY KEY, name TEXT)"

    init(name: String) {
        self.name = name
        super.init()
    }

    required init(row: Row) throws {
        name = row["name"]
        try super.init(row: row)
    }

    override func encode(to container: inout PersistenceContainer) throws {
        container["name"] = name
    }
}

/// GRDB's benchmark `Item`: a `Record` subclass with ten integers.
final class GRDBItem: Record {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int

    override class var databaseTableName: String { "item" }

    static let createTable = "CREATE TABLE item (i0 INT, i1 INT, i2 INT, i3 INT, i4 INT, i5 INT, i6 INT, i7 INT, i8 INT, i9 INT)"

    init(i0: Int, i1: Int, i2: Int, i3: Int, i4: Int, i5: Int, i6: Int, i7: Int, i8: Int, i9: Int) {
        (self.i0, self.i1, self.i2, self.i3, self.i4) = (i0, i1, i2, i3, i4)
        (self.i5, self.i6, self.i7, self.i8, self.i9) = (i5, i6, i7, i8, i9)
        super.init()
    }

    required init(row: Row) throws {
        i0 = row["i0"]
        i1 = row["i1"]
        i2 = row["i2"]
        i3 = row["i3"]
        i4 = row["i4"]
        i5 = row["i5"]
        i6 = row["i6"]
        i7 = row["i7"]
        i8 = row["i8"]
        i9 = row["i9"]
        try super.init(row: row)
    }

    override func encode(to container: inout PersistenceContainer) throws {
        container["i0"] = i0
        container["i1"] = i1
        container["i2"] = i2
        container["i3"] = i3
        container["i4"] = i4
        container["i5"] = i5
        container["i6"] = i6
        container["i7"] = i7
        container["i8"] = i8
        container["i9"] = i9
    }
}

/// A migration workload (BenchMigration.swift): GRDB records run the change as a GRDB app writes
/// it, a `DatabaseMigrator` migration with `alter(table:)`; GRDB statements run raw SQLite's SQL in
/// one `write`. The pool is opened inside the timed part, as the other engines open their stores.
private func migrationRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder, statements: Bool) -> BenchRepetition {
    {
        let file = try MigrationBench.freshSource(size: size, folder: folder, stem: statements ? "grdb-sql-migrate" : "grdb-migrate")
        defer { BenchFolder.remove(file) }
        var sample = try BenchMeter.measure {
            let pool = try DatabasePool(path: file.path)
            if statements {
                try pool.write { db in for sql in MigrationBench.rawSQL(workload) { try db.execute(sql: sql) } }
            } else {
                var migrator = DatabaseMigrator()
                migrator.registerMigration(workload.rawValue) { db in
                    if workload == .migrationAddAttribute {
                        try db.alter(table: "ZITEM") { t in t.add(column: "ZFLAG", .integer) }
                    } else if workload == .migrationThroughManager {
                        for sql in MigrationBench.rawSQL(workload) { try db.execute(sql: sql) }
                    } else {
                        try db.alter(table: "ZITEM") { t in t.rename(column: "ZN", to: "ZCOUNT") }
                        try db.execute(sql: #"UPDATE "ZITEM" SET "ZCOUNT" = 0 WHERE "ZCOUNT" IS NULL"#)
                    }
                }
                try migrator.migrate(pool)
            }
            try pool.close()
            return 0
        }
        sample.checksum = try MigrationBench.check(file, workload)
        return sample
    }
}

/// One timed run on a fresh file: the pool is opened and the table created untimed, `work` is
/// timed, then the rows are checked and the pool closed, untimed.
private func timedOnFreshPool(_ folder: BenchFolder, _ prefix: String, create: String, table: String, rows: Int, engine: String,
                              _ work: (DatabasePool) throws -> Int) throws -> BenchSample {
    let file = folder.freshFile(prefix)
    defer { BenchFolder.remove(file) }
    let pool = try DatabasePool(path: file.path)
    try pool.write { db in try db.execute(sql: create) }
    let sample = try BenchMeter.measure { try work(pool) }
    try closeAfterChecking(pool, table: table, rows: rows, engine: engine)
    return sample
}

/// Checks that an engine wrote the rows it should have, then closes its pool (untimed).
private func closeAfterChecking(_ pool: DatabasePool, table: String, rows expected: Int, engine: String) throws {
    let count = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0 }
    guard count == expected else { throw BenchFailure("\(engine): \(count) \(table) rows, expected \(expected)") }
    try pool.close()
}

/// A batch workload (BenchBatch.swift) on a fresh copy of the filled `item` file: GRDB records use
/// the query interface (`updateAll`, `filter(…).deleteAll`), GRDB statements raw SQLite's SQL.
private func batchRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder, statements: Bool) -> BenchRepetition {
    {
        let file = try BatchBench.freshRawSource(size: size, folder: folder, stem: statements ? "grdb-sql-batch" : "grdb-batch")
        defer { BenchFolder.remove(file) }
        let pool = try DatabasePool(path: file.path)
        var sample = try BenchMeter.measure {
            try pool.write { db in
                switch (workload, statements) {
                case (.batchUpdate, false): _ = try GRDBItem.updateAll(db, Column("i1") += 1)
                case (_, false): _ = try GRDBItem.filter(Column("i0") >= 0).deleteAll(db)
                default: try db.execute(sql: workload == .batchUpdate ? BatchBench.updateSQL : BatchBench.deleteSQL)
                }
            }
            return 0
        }
        sample.checksum = try pool.read { db in
            workload == .batchUpdate ? try Int.fetchOne(db, sql: "SELECT sum(i1) FROM item") ?? 0
                : size - (try Int.fetchOne(db, sql: "SELECT count(*) FROM item") ?? 0)
        }
        try pool.close()
        return sample
    }
}

/// (fr) (BenchFetchedResults.swift) through GRDB: raw SQLite's `UPDATE` and count per edit, as
/// cached statements in one `pool.write` (GRDB records have no sorted-list tracking either).
private func fetchedResultsRepetition(size: Int, folder: BenchFolder, stem: String) -> BenchRepetition {
    {
        let file = try BatchBench.freshRawSource(size: size, folder: folder, stem: stem)
        defer { BenchFolder.remove(file) }
        let pool = try DatabasePool(path: file.path)
        try pool.write { db in try db.execute(sql: "UPDATE item SET i0 = 2 * i0") }
        var sum = 0
        var sample = try BenchMeter.measure {
            try pool.write { db in
                for k in 0..<FetchedResultsBench.edits(size: size) {
                    let (row, value) = FetchedResultsBench.edit(k, size: size)
                    try db.cachedStatement(sql: FetchedResultsBench.updateSQL).execute(arguments: [value, row + 1])
                    sum += try Int.fetchOne(db.cachedStatement(sql: FetchedResultsBench.positionSQL), arguments: [value]) ?? 0
                }
            }
            return 0
        }
        sample.checksum = sum
        try pool.close()
        return sample
    }
}
