import CSQLite
import CoreData
import Foundation

// Issue 23's batch workloads, on (b)'s `Item` rows of ten Integer 64 values:
//
// - (bi) 1,000,000 rows inserted by `NSBatchInsertRequest` with a dictionary handler; raw SQLite
//   runs (b)'s prepared-statement loop in one transaction.
// - (bu) the 1,000,000 rows of a filled store updated by `NSBatchUpdateRequest` (`i1 + 1`); raw
//   SQLite runs the `UPDATE`.
// - (bd) the same rows deleted by `NSBatchDeleteRequest` with a predicate that keeps none
//   (`i0 >= 0`); raw SQLite runs the `DELETE … WHERE` (a `DELETE` without `WHERE` would be
//   SQLite's truncate shortcut, which no predicate gets).
//
// - (bh) (b)'s one save of 100,000 `Item`s with NSPersistentHistoryTrackingKey on; its baseline,
//   in the raw SQLite column, is the same save with history off (the library against itself).
//
// The filled stores are made once per run (untimed) and copied fresh for every repetition. This
// file must not import GRDB (see BenchRawSQLite.swift); the GRDB engines are in BenchGRDB.swift.

enum BatchBench {
    static let updateSQL = "UPDATE item SET i1 = i1 + 1"
    static let deleteSQL = "DELETE FROM item WHERE i0 >= 0"

    /// The checksum every engine must report: the rows inserted or deleted, or the sum of `i1`
    /// after the update (each row's `i` plus one).
    static func expectedChecksum(_ workload: BenchWorkload, size: Int) -> Int {
        workload == .batchUpdate ? size * (size - 1) / 2 + size : size
    }

    // MARK: Filled stores

    /// A copy, for one repetition, of a file of `size` rows in raw SQLite's `item` table.
    static func freshRawSource(size: Int, folder: BenchFolder, stem: String) throws -> URL {
        let source = try folder.prepared("batch-raw-\(size)") {
            let file = folder.freshFile("batch-raw-source")
            let db = try RawConnection(path: file.path)
            try db.execute(RawItem.createTable)
            try fill(db, table: "item", columns: "i0, i1, i2, i3, i4, i5, i6, i7, i8, i9", size: size) { _ in [] }
            return file
        }
        return try copy(source, folder: folder, stem: stem)
    }

    /// A copy, for one repetition, of a Core Data store of `size` `Item` rows (the store made by
    /// Core Data, the rows written by SQL).
    static func freshCoreDataSource(size: Int, folder: BenchFolder, model: NSManagedObjectModel, stem: String) throws -> URL {
        let source = try folder.prepared("batch-coredata-\(size)") {
            let file = folder.freshFile("batch-coredata-source")
            do {
                let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
                let store = try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: file, options: nil)
                try coordinator.remove(store)
            }
            let db = try RawConnection(path: file.path)
            let entity = try db.scalar(#"SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'"#)
            try fill(db, table: "ZITEM", columns: "Z_PK, Z_ENT, Z_OPT, ZI0, ZI1, ZI2, ZI3, ZI4, ZI5, ZI6, ZI7, ZI8, ZI9", size: size) { i in
                [Int64(i + 1), Int64(entity), 1]
            }
            try db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(size) WHERE Z_ENT = \(entity)")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return file
        }
        return try copy(source, folder: folder, stem: stem)
    }

    /// Inserts `size` rows into `table`: the values `prefix` gives, then ten times `i`.
    private static func fill(_ db: RawConnection, table: String, columns: String, size: Int, prefix: (Int) -> [Int64]) throws {
        let count = columns.split(separator: ",").count
        let insert = try db.prepare("INSERT INTO \(table) (\(columns)) VALUES (\(Array(repeating: "?", count: count).joined(separator: ", ")))")
        defer { sqlite3_finalize(insert) }
        try db.execute("BEGIN IMMEDIATE")
        for i in 0..<size {
            let values = prefix(i) + Array(repeating: Int64(i), count: 10)
            for (index, value) in values.enumerated() { sqlite3_bind_int64(insert, Int32(index + 1), value) }
            try db.run(insert)
        }
        try db.execute("COMMIT")
    }

    private static func copy(_ source: URL, folder: BenchFolder, stem: String) throws -> URL {
        let copy = folder.freshFile(stem)
        try FileManager.default.copyItem(at: source, to: copy)
        return copy
    }

    // MARK: Engines

    /// swift-coredata: the batch request executed by a context on a fresh stack.
    static func coreDataRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        let model = CoreDataBench.itemModel(className: "NSManagedObject")
        let keys = CoreDataBench.itemKeys
        return {
            let file = workload == .batchInsert ? folder.freshFile("coredata-batch")
                : try freshCoreDataSource(size: size, folder: folder, model: model, stem: "coredata-batch")
            defer { BenchFolder.remove(file) }
            let stack = try CoreDataBench.Stack(model: model, url: file)
            let context = stack.context
            var sample = try context.performAndWait {
                try BenchMeter.measure {
                    switch workload {
                    case .batchInsert:
                        var i = 0
                        let request = NSBatchInsertRequest(entityName: "Item", dictionaryHandler: { row in
                            guard i < size else { return true }
                            for key in keys { row[key] = i }
                            i += 1
                            return false
                        })
                        _ = try context.execute(request)
                    case .batchUpdate:
                        let request = NSBatchUpdateRequest(entityName: "Item")
                        request.propertiesToUpdate = ["i1": NSExpression(format: "i1 + 1")]
                        _ = try context.execute(request)
                    default:
                        let fetch = NSFetchRequest<NSFetchRequestResult>(entityName: "Item")
                        fetch.predicate = NSPredicate(format: "i0 >= 0")
                        _ = try context.execute(NSBatchDeleteRequest(fetchRequest: fetch))
                    }
                    return 0
                }
            }
            let db = try RawConnection(path: file.path)
            switch workload {
            case .batchInsert: sample.checksum = try db.scalar("SELECT count(*) FROM ZITEM")
            case .batchUpdate: sample.checksum = try db.scalar("SELECT sum(ZI1) FROM ZITEM")
            default: sample.checksum = size - (try db.scalar("SELECT count(*) FROM ZITEM"))
            }
            return sample
        }
    }

    /// (bh): (b)'s save of `size` `Item`s by swift-coredata, with persistent history on or off.
    static func historySaveRepetition(history: Bool, size: Int, folder: BenchFolder) -> BenchRepetition {
        let model = CoreDataBench.itemModel(className: "NSManagedObject")
        let keys = CoreDataBench.itemKeys
        let options: [AnyHashable: Any]? = history ? [NSPersistentHistoryTrackingKey: true as NSNumber] : nil
        return {
            try CoreDataBench.timedOnFreshStack(folder, history ? "coredata-history" : "coredata-no-history", model: model, entity: "Item",
                                                rows: size, options: options) { context in
                for i in 0..<size {
                    let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                    for key in keys { item.setValue(i, forKey: key) }
                }
                try context.save()
                return size
            }
        }
    }

    /// Raw SQLite's update and delete, on a fresh copy of the filled `item` file (its insert is (b)'s loop).
    static func rawRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        {
            let file = try freshRawSource(size: size, folder: folder, stem: "raw-batch")
            defer { BenchFolder.remove(file) }
            let db = try RawConnection(path: file.path)
            var sample = try BenchMeter.measure {
                try db.execute(workload == .batchUpdate ? updateSQL : deleteSQL)
                return 0
            }
            sample.checksum = workload == .batchUpdate ? try db.scalar("SELECT sum(i1) FROM item") : size - (try db.scalar("SELECT count(*) FROM item"))
            return sample
        }
    }
}
