import Foundation

// What `NSPersistentHistoryChangeRequest` and the coordinator's history token need of a store
// that records persistent history, whatever its database: the SQLite store
// (`SQLiteStore+History.swift`, `+HistoryFetch.swift`) and the PostgreSQL store
// (`PostgreSQLStore+History.swift`) both keep Apple's `ATRANSACTION`, `ACHANGE` and
// `ATRANSACTIONSTRING` rows; what they know of the model (tombstones, `ZCOLUMNS` bits, tracked
// entities) is one ``SQLiteHistory``, and a change row becomes an `NSPersistentHistoryChange`
// the same way in both (``SQLiteHistory/change(_:type:entityNumber:primaryKey:store:entity:mask:tombstone:)``).

/// A store that records persistent history (`NSPersistentHistoryTrackingKey`).
internal protocol HistoryRecordingStore: NSPersistentStore {
    /// What the store records; `nil` when it was added without `NSPersistentHistoryTrackingKey`.
    var history: SQLiteHistory? { get }
    /// The number of the store's last transaction; 0 when it has none.
    func lastHistoryTransaction() throws -> Int64
    /// Throws `NSPersistentHistoryTokenExpiredError` (134301) when history after the
    /// transaction `number` of a token (from 1 on) was purged (``HistoryTokenCheck``).
    func checkHistoryToken(_ number: Int64) throws
    /// The transactions after `bound`, oldest first, with their changes if `withChanges`.
    func fetchHistory(after bound: HistoryBound?, withChanges: Bool) throws -> [NSPersistentHistoryTransaction]
    /// How many changes the transactions after `bound` hold, counted in SQL (a `.count`
    /// request without a fetch request to filter them).
    func countHistoryChanges(after bound: HistoryBound?) throws -> Int
    /// Purges the transactions before `bound` (every one for `nil`) and their changes, in one
    /// transaction; how many transactions went.
    func deleteHistory(before bound: HistoryBound?) throws -> Int
}

extension SQLiteStore: HistoryRecordingStore {}

/// When a history token has expired: when transactions after its transaction `N` may have been
/// purged. A purge removes the transactions before a bound, so the history after `N` is whole
/// when `N` is still there, when the first transaction after it is `N + 1`, or when none came
/// after it (the transactions' key sequence, `Z_PRIMARYKEY`'s `Z_MAX`, is still `N`: a token taken
/// just before everything was purged has missed nothing). A token past `Z_MAX` (of a store later
/// restored from an older copy) has expired.
internal enum HistoryTokenCheck {
    /// One row, one column: non-zero when the token of transaction `parameter` is current.
    static func sql(transactions: String, primaryKeys: String, pk: String, ent: String, max: String, parameter: String) -> String {
        let last = "coalesce((SELECT \(max) FROM \(primaryKeys) WHERE \(ent) = \(SQLiteHistory.transactionEntity)), 0)"
        return "SELECT CASE WHEN EXISTS (SELECT 1 FROM \(transactions) WHERE \(pk) = \(parameter)) THEN 1 "
            + "WHEN \(parameter) > \(last) THEN 0 "
            + "WHEN coalesce((SELECT min(\(pk)) FROM \(transactions) WHERE \(pk) > \(parameter)), \(last) + 1) <= \(parameter) + 1 THEN 1 ELSE 0 END"
    }
}

extension HistoryRecordingStore {
    /// 134301 for a token whose transaction was purged from the store at `location`.
    func historyTokenExpired(location: String) -> NSError {
        CoreDataError.make(.persistentHistoryTokenExpired, "Persistent History Token is expired for store at \(location)",
                           extra: ["message": "Persistent History Token is expired for store at \(location)",
                                   NSStoreUUIDKey: identifier ?? "", NSFilePathErrorKey: location])
    }
}

extension SQLiteHistory {
    /// The change row `changeID` of `ACHANGE` as a change of `transaction`: its type
    /// (`ZCHANGETYPE`), its object (`ZENTITY` numbered as the store numbers it, `entity`, and
    /// `ZENTITYPK`), the updated properties of its `ZCOLUMNS` mask (`mask`, asked only for an
    /// update) and, for a delete, the kept values (`tombstone`: the value of the tombstone column
    /// at a position for an attribute, or `nil`). `nil`, logged, when the entity or the type is
    /// not known.
    func change(_ changeID: Int64, type rawType: Int64, entityNumber: Int64, primaryKey: Int64, store: NSPersistentStore,
                entity: NSEntityDescription?, mask: () -> Data?,
                tombstone: (_ position: Int, _ attribute: NSAttributeDescription) -> StoreValue?) -> NSPersistentHistoryChange? {
        guard let type = NSPersistentHistoryChangeType(rawValue: Int(rawType)), let entity, primaryKey >= 1 else {
            CoreDataLog.warning("Skipped persistent history change \(changeID) of the store at \(store.url?.path ?? ""): its entity \(entityNumber) or type \(rawType) is not known")
            return nil
        }
        let id = NSManagedObjectID(entity: entity, store: store, primaryKey: primaryKey)
        var updated: Set<NSPropertyDescription>?
        if type == .update, let mask = mask() { updated = properties(of: entity, mask: mask) }
        var kept: [AnyHashable: Any]?
        if type == .delete {
            var values: [AnyHashable: Any] = [:]
            var leaves: [Int: Any] = [:]
            for (position, index) in tombstones[entity.layout.entityNumber].enumerated() {
                guard let attribute = entity.layout.properties[index] as? NSAttributeDescription,
                      let value = tombstone(position, attribute)?.objectValue else { continue }
                if attribute is CompositeLeafAttribute { leaves[index] = value } else { values[attribute.name] = value }
            }
            // A composite's kept leaves, as the composite's dictionary.
            for case let leaf as CompositeLeafAttribute in leaves.keys.map({ entity.layout.properties[$0] }) {
                guard let composite = leaf.composite, values[composite.name] == nil else { continue }
                values[composite.name] = CompositeValues.assemble(composite) { leaves[$0] }
            }
            kept = values.isEmpty ? nil : values
        }
        return NSPersistentHistoryChange(changeID: changeID, changedObjectID: id, changedEntityNumber: entityNumber, changeType: type,
                                         tombstone: kept, updatedProperties: updated)
    }
}

extension SQLiteHistory {
    /// How many change rows a save writes: one per inserted, updated and deleted object of a
    /// tracked entity. A save that writes none writes no transaction either.
    func changeCount(of changes: SaveChanges) -> Int {
        guard tracked != nil else { return changes.inserts.count + changes.updates.count + changes.deletes.count }
        return changes.inserts.count { tracks($0.entity) } + changes.updates.count { tracks($0.id.entity) }
            + changes.deletes.count { tracks($0.id.entity) }
    }

    /// Calls `body` with each change row of a save, in Apple's order (inserts, updates, deletes):
    /// its `ZCHANGETYPE`, its object's entity and key (`insertedKeys` are the inserts' keys), its
    /// `ZCOLUMNS` mask (updates) and, for a delete, its position among the save's deletes.
    /// Without `includingInserts`, only the updates' and deletes' rows (the SQLite store writes the
    /// inserts' rows by runs).
    func forEachChange(of changes: SaveChanges, insertedKeys: [Int64], includingInserts: Bool = true,
                       _ body: (_ type: Int64, _ entity: NSEntityDescription, _ primaryKey: Int64, _ mask: Data?, _ deletePosition: Int?) throws -> Void) rethrows {
        if includingInserts {
            for (insert, pk) in zip(changes.inserts, insertedKeys) where tracks(insert.entity) {
                try body(0, insert.entity, pk, nil, nil)
            }
        }
        for update in changes.updates where tracks(update.id.entity) {
            guard let pk = update.id.primaryKey else { continue }
            try body(1, update.id.entity, pk, mask(of: update.id.entity, changed: update.changedIndexes), nil)
        }
        for (position, delete) in changes.deletes.enumerated() where tracks(delete.id.entity) {
            guard let pk = delete.id.primaryKey else { continue }
            try body(2, delete.id.entity, pk, nil, position)
        }
    }
}
