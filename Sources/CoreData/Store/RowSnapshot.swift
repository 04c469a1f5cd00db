import Foundation

/// A store row as the layers above the store see it: the values of an object by property index
/// (attributes, and to-one relationships as object IDs), with its optimistic-locking version
/// (`Z_OPT`). Never an object: stores deal in IDs and snapshots only.
internal struct RowSnapshot: @unchecked Sendable {
    /// The row's entity (a sub-entity of the fetched entity, possibly).
    let entity: NSEntityDescription
    /// Values by property index; relationships that are not stored in the row are `.null`.
    var values: PropertyValues
    /// `Z_OPT`: incremented by every save of the row.
    var version: Int64
}

/// A row returned by a fetch: its store, primary key and snapshot. The `NSManagedObjectID` is
/// made only when asked for (``id``): a fetch of many rows does not allocate one per row.
internal struct FetchedRow: @unchecked Sendable {
    let store: NSPersistentStore
    let primaryKey: Int64
    let snapshot: RowSnapshot

    init(store: NSPersistentStore, primaryKey: Int64, snapshot: RowSnapshot) {
        self.store = store
        self.primaryKey = primaryKey
        self.snapshot = snapshot
    }

    /// A row for a permanent ID.
    init(id: NSManagedObjectID, snapshot: RowSnapshot) {
        self.init(store: id.persistentStore!, primaryKey: id.key.value, snapshot: snapshot)
    }

    /// The key of the row's object ID.
    var key: IDKey { IDKey(store: store.tag, root: snapshot.entity.layout.rootNumber, value: primaryKey) }
    /// The row's object ID (a new instance on every call).
    var id: NSManagedObjectID { NSManagedObjectID(entity: snapshot.entity, store: store, primaryKey: primaryKey) }
}

/// A fetched row as a store lends it to the body of `fetchRows(_:each:)`, for the length of
/// one call: the hot path of a fetch, which makes an object of each row.
///
/// Its store and entity are not retained (two retains and releases fewer per row, and none to
/// copy the row): whoever lends the row holds both for the whole call — the store is the
/// receiver of `fetchRows(_:each:)`, the entity is held by the store's row decoder (or by the
/// `FetchedRow` the row was lent from). The body must retain them to keep them (``fetchedRow``
/// does). The values are the row's own: the body may move them into an object.
internal struct LentRow: @unchecked Sendable {
    unowned(unsafe) let store: NSPersistentStore
    unowned(unsafe) let entity: NSEntityDescription
    let primaryKey: Int64
    var values: PropertyValues
    /// `Z_OPT`.
    let version: Int64

    init(store: NSPersistentStore, entity: NSEntityDescription, primaryKey: Int64, values: consuming PropertyValues, version: Int64) {
        self.store = store
        self.entity = entity
        self.primaryKey = primaryKey
        self.values = values
        self.version = version
    }

    /// `row`, lent: valid while `row` (which holds its store and entity) is.
    init(lending row: borrowing FetchedRow) {
        self.init(store: row.store, entity: row.snapshot.entity, primaryKey: row.primaryKey,
                  values: row.snapshot.values, version: row.snapshot.version)
    }

    /// The row as a snapshot that holds its entity.
    var snapshot: RowSnapshot { RowSnapshot(entity: entity, values: values, version: version) }
    /// The row as a `FetchedRow` that holds its store and entity, to be kept.
    var fetchedRow: FetchedRow { FetchedRow(store: store, primaryKey: primaryKey, snapshot: snapshot) }
}

/// A row's identity without its values: what a batched or ID-only fetch reads first.
internal struct FetchedKey: @unchecked Sendable {
    let entity: NSEntityDescription
    let primaryKey: Int64
}

/// A destination row of a prefetched to-many relationship, with its owner's primary key.
internal struct RelatedRow: @unchecked Sendable {
    let owner: Int64
    let row: FetchedRow
}

/// What a fetch asks a store for, compiled from an `NSFetchRequest`.
internal struct FetchPlan: @unchecked Sendable {
    var entity: NSEntityDescription
    var includesSubentities: Bool = true
    var predicate: PredicateNode?
    var sortKeys: [SortKey] = []
    var limit: Int = 0
    var offset: Int = 0
    /// The fetch request's own predicate and sort descriptors, which an ``NSIncrementalStore``
    /// passes on (`nil` for a plan made without a fetch request).
    var requestPredicate: NSPredicate?
    var requestSortDescriptors: [NSSortDescriptor]?
    /// The request's `affectedStores`: only these of the stores holding the entity are read
    /// (`nil`: all of them).
    var affectedStores: [NSPersistentStore]?
}

/// The changes of one save, for one store: snapshots keyed by object ID, never objects.
internal struct SaveChanges: @unchecked Sendable {
    /// A new row. Its object's ID is not made for the save: the key says whether it is
    /// temporary (the store allocates a primary key) or permanent (`obtainPermanentIDs`).
    struct Insert {
        /// Not retained (one retain and release fewer per saved object): the entity belongs to
        /// the model of the coordinator the save goes through, which outlives the save, and the
        /// object being saved holds it too.
        unowned(unsafe) var entity: NSEntityDescription
        var key: IDKey
        var values: PropertyValues
        var isTemporary: Bool { key.store == IDKey.temporaryStore }
        /// The primary key of a permanent ID; `nil` for a temporary one.
        var primaryKey: Int64? { isTemporary ? nil : key.value }
    }
    struct Update {
        var id: NSManagedObjectID
        var values: PropertyValues
        var changedIndexes: [Int]
        var expectedVersion: Int64
        /// The version the row gets (``RowVersion/next(after:)``).
        var nextVersion: Int64 { RowVersion.next(after: expectedVersion) }
    }
    struct Delete {
        var id: NSManagedObjectID
        /// The version the object read (`Z_OPT`), which the row must still have; `nil` if the
        /// object never read the row (a fault deleted by ID): the row goes whatever its version,
        /// as on Apple platforms.
        var expectedVersion: Int64?
    }
    /// A row of a many-to-many join table, seen from the side that owns the table in the model
    /// (``NSRelationshipDescription/JoinTable/isOwner``): `first` is an object of `relationship`'s
    /// entity, `second` one of its members. The store knows which of its columns holds which.
    struct JoinRow: Hashable {
        var relationship: NSRelationshipDescription
        var first: NSManagedObjectID
        var second: NSManagedObjectID

        static func == (a: JoinRow, b: JoinRow) -> Bool {
            a.relationship === b.relationship && a.first == b.first && a.second == b.second
        }
        func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(relationship))
            hasher.combine(first)
            hasher.combine(second)
        }
    }
    /// The position of `member` in an ordered relationship (a `Z_FOK_` value).
    struct OrderUpdate {
        var relationship: NSRelationshipDescription
        var owner: NSManagedObjectID
        var member: NSManagedObjectID
        var position: Int64
    }

    /// A member of a to-many relationship without an inverse: its hidden foreign key.
    struct ForeignKeyUpdate {
        var relationship: NSRelationshipDescription
        var member: NSManagedObjectID
        var owner: NSManagedObjectID?
    }

    /// An object the saving context marked with `detectConflicts(for:)` and did not change:
    /// nothing is written for it, but its row must still have the version the object read, or
    /// the save meets a conflict (``StoreConflict``) as an update would.
    struct Lock {
        var id: NSManagedObjectID
        var expectedVersion: Int64
    }

    var inserts: [Insert] = []
    var foreignKeyUpdates: [ForeignKeyUpdate] = []
    var updates: [Update] = []
    var deletes: [Delete] = []
    var joinInserts: [JoinRow] = []
    var joinDeletes: [JoinRow] = []
    var orderUpdates: [OrderUpdate] = []
    var locks: [Lock] = []
    /// The saving context's ``NSManagedObjectContext/transactionAuthor`` and ``NSManagedObjectContext/name``,
    /// which persistent history records with the save.
    var transactionAuthor: String?
    var contextName: String?
    /// The saving context, on whose queue the save runs: an ``NSIncrementalStore`` hands its
    /// objects to `execute(_:with:)`. Not retained: the context is saving.
    unowned(unsafe) var context: NSManagedObjectContext?

    var isEmpty: Bool {
        writesNothing && locks.isEmpty
    }

    /// Whether the save changes no row here (it may still check ``locks``).
    var writesNothing: Bool {
        inserts.isEmpty && updates.isEmpty && deletes.isEmpty && joinInserts.isEmpty && joinDeletes.isEmpty && orderUpdates.isEmpty && foreignKeyUpdates.isEmpty
    }
}

/// The outcome of a save: the primary key of each insert, in the order of
/// ``SaveChanges/inserts`` (an insert whose ID was already permanent keeps its key). No
/// `NSManagedObjectID` is made for them: the context gives its objects their keys.
internal struct SaveResult: Sendable {
    var insertedKeys: [Int64] = []
    /// The persistent history transaction the save wrote (`nil` without history, or when it
    /// changed no tracked entity): the did-save notification's `"newChangeToken"`.
    var historyTransaction: Int64?
}

/// Turns the temporary IDs of a save's inserts into their permanent ones. The lookup table is
/// built only when a temporary ID is met outside the inserts themselves (a relationship to a new
/// object): a save of unrelated new objects never hashes their keys nor makes their IDs.
internal struct TemporaryIDResolver {
    private let inserts: [SaveChanges.Insert]
    private let keys: [Int64]
    private let store: NSPersistentStore
    private var table: [IDKey: NSManagedObjectID]?

    /// `keys`: the primary keys of `inserts`, in order, in `store`.
    init(inserts: [SaveChanges.Insert], keys: [Int64], store: NSPersistentStore) {
        self.inserts = inserts
        self.keys = keys
        self.store = store
    }

    /// `id`'s permanent ID if it is the temporary ID of one of the inserts, else `id`.
    mutating func resolve(_ id: NSManagedObjectID) -> NSManagedObjectID {
        guard id.isTemporaryID else { return id }
        if table == nil {
            var table: [IDKey: NSManagedObjectID] = [:]
            table.reserveCapacity(inserts.count)
            for (insert, key) in zip(inserts, keys) where insert.isTemporary {
                table[insert.key] = NSManagedObjectID(entity: insert.entity, store: store, primaryKey: key)
            }
            self.table = table
        }
        return table![id.key] ?? id
    }
}

/// A row's version (`Z_OPT`) after a save changes it.
internal enum RowVersion {
    /// One more, or 1 after the largest: a store another tool wrote may hold any `Z_OPT`, and the
    /// next version only has to differ from the one read.
    static func next(after version: Int64) -> Int64 { version == .max ? 1 : version + 1 }
}

/// Primary keys handed out from `Z_PRIMARYKEY`'s `Z_MAX`.
internal enum PrimaryKeys {
    /// `key + count`, or 134030 when that passes the largest integer: the table's keys have run
    /// out (a `Z_MAX` at or near the largest integer, as another tool may have written).
    static func advance(_ key: Int64, by count: Int64 = 1, table: String?) throws -> Int64 {
        let (sum, overflow) = key.addingReportingOverflow(count)
        guard !overflow, sum < .max else {
            throw CoreDataError.make(.persistentStoreSave,
                "The primary keys of \(table ?? "a table") have run out: Z_PRIMARYKEY's Z_MAX is \(key), and \(count) more do not fit; nothing was saved")
        }
        return sum
    }

    /// 134030 for a `Z_MAX` that is NULL (or not a number): keys cannot be handed out from it.
    static func missingMaximum(table: String?) -> NSError {
        CoreDataError.make(.persistentStoreSave,
            "Z_PRIMARYKEY's Z_MAX of \(table ?? "a table") is not a number, so no primary key can be handed out; nothing was saved")
    }
}

/// An optimistic-locking failure found by a store: the row changed (or vanished) since the
/// saving context read it.
internal struct StoreConflict: @unchecked Sendable {
    var id: NSManagedObjectID
    var expectedVersion: Int64
    /// The row as the store holds it now; `nil` if it was deleted.
    var persisted: RowSnapshot?
}

/// Thrown by a store when a save meets optimistic-locking conflicts; nothing was written.
internal struct StoreConflictError: Error, @unchecked Sendable {
    var conflicts: [StoreConflict]
}
