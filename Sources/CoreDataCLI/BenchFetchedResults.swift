import CSQLite
import CoreData
import Foundation

// Issue 24's fetched-results workload (fr): a list of `size` `Item`s sorted by `i0`, kept current
// through `size / 100` single-row edits, each moving one row to a new place.
//
// - swift-coredata: an `NSFetchedResultsController` (sorted by `i0`, with a delegate) over the
//   fetched items; each edit sets one object's `i0` and calls `processPendingChanges()`, and the
//   delegate's `.move` gives the row's new index. The controller finds it by binary search.
// - raw SQLite (and GRDB's statements): what an app without a controller does, each edit an
//   `UPDATE` and the row's new index counted in SQL (`count(*)` of the rows sorting before it: a
//   scan, the least a re-fetch costs).
//
// `i0` holds even numbers (`2 × index`) and each edit sets an odd number no other edit sets, so no
// two rows tie and every engine finds the same indexes; the checksum is their sum. The filled
// stores come from BenchBatch.swift. This file must not import GRDB (see BenchRawSQLite.swift).

enum FetchedResultsBench {
    /// The edits of a list of `size` rows.
    static func edits(size: Int) -> Int { max(1, size / 100) }

    /// Edit `k`: the row it changes (its index in the list before any edit; rows are `Z_PK - 1`)
    /// and `i0`'s new value. 7,919 and 104,729 are primes, so for `k < size` neither repeats.
    static func edit(_ k: Int, size: Int) -> (row: Int, value: Int64) {
        ((k &* 7_919) % size, Int64(2 * ((k &* 104_729) % size) + 1))
    }

    /// The checksum: the sum of the edited rows' indexes after each edit, computed in Swift.
    static func expectedChecksum(size: Int) -> Int {
        var values = (0..<size).map { Int64(2 * $0) }
        var sum = 0
        for k in 0..<edits(size: size) {
            let (row, value) = edit(k, size: size)
            values[row] = value
            sum += values.reduce(0) { $0 + ($1 < value ? 1 : 0) }
        }
        return sum
    }

    /// The delegate: adds up the new index of every moved or updated row.
    final class IndexSum: NSFetchedResultsControllerDelegate {
        var sum = 0
        func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any,
                        at indexPath: IndexPath?, for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
            sum += (newIndexPath ?? indexPath)?.row ?? 0
        }
    }

    /// swift-coredata: the controller fetched (untimed), then the edits (timed).
    static func coreDataRepetition(size: Int, folder: BenchFolder) -> BenchRepetition {
        let model = CoreDataBench.itemModel(className: String(reflecting: BenchItem.self))
        return {
            let file = try BatchBench.freshCoreDataSource(size: size, folder: folder, model: model, stem: "coredata-frc")
            defer { BenchFolder.remove(file) }
            try RawConnection(path: file.path).execute("UPDATE ZITEM SET ZI0 = 2 * ZI0")
            let stack = try CoreDataBench.Stack(model: model, url: file)
            let context = stack.context
            return try context.performAndWait {
                let request = NSFetchRequest<BenchItem>(entityName: "Item")
                request.sortDescriptors = [NSSortDescriptor(key: "i0", ascending: true)]
                let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                            sectionNameKeyPath: nil, cacheName: nil)
                let delegate = IndexSum()
                controller.delegate = delegate
                try controller.performFetch()
                let rows = controller.fetchedObjects ?? []
                guard rows.count == size else { throw BenchFailure("coredata: the controller fetched \(rows.count) items, expected \(size)") }
                var sample = BenchMeter.measure {
                    for k in 0..<edits(size: size) {
                        let (row, value) = edit(k, size: size)
                        rows[row].i0 = value
                        context.processPendingChanges()
                    }
                    return 0
                }
                sample.checksum = delegate.sum
                return sample
            }
        }
    }

    /// Raw SQLite: each edit an `UPDATE` and a count of the rows before it, in one transaction.
    static func rawRepetition(size: Int, folder: BenchFolder) -> BenchRepetition {
        {
            let file = try BatchBench.freshRawSource(size: size, folder: folder, stem: "raw-frc")
            defer { BenchFolder.remove(file) }
            let db = try RawConnection(path: file.path)
            try db.execute("UPDATE item SET i0 = 2 * i0")
            let update = try db.prepare(updateSQL)
            let position = try db.prepare(positionSQL)
            defer { for statement in [update, position] { sqlite3_finalize(statement) } }
            try db.execute("BEGIN IMMEDIATE")
            var sum = 0
            var sample = try BenchMeter.measure {
                for k in 0..<edits(size: size) {
                    let (row, value) = edit(k, size: size)
                    sqlite3_bind_int64(update, 1, value)
                    sqlite3_bind_int64(update, 2, Int64(row + 1))
                    try db.run(update)
                    sqlite3_bind_int64(position, 1, value)
                    guard sqlite3_step(position) == SQLITE_ROW else { throw db.failure(sqlite3_errcode(db.handle), "count") }
                    sum += Int(sqlite3_column_int64(position, 0))
                    sqlite3_reset(position)
                }
                return 0
            }
            try db.execute("COMMIT")
            sample.checksum = sum
            return sample
        }
    }

    static let updateSQL = "UPDATE item SET i0 = ? WHERE rowid = ?"
    static let positionSQL = "SELECT count(*) FROM item WHERE i0 < ?"
}
