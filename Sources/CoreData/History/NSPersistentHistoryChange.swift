import Foundation

/// What a persistent history change did to its object: Apple's values, as `ACHANGE.ZCHANGETYPE`
/// stores them.
///
/// ```swift
/// if change.changeType == .delete { print(change.tombstone ?? [:]) }
/// ```
public enum NSPersistentHistoryChangeType: Int, Sendable {
    case insert = 0
    case update = 1
    case delete = 2
}

/// One object inserted, updated or deleted by a transaction of a store's persistent history.
///
/// ```swift
/// for change in transaction.changes ?? [] where change.changeType == .update {
///     print(change.changedObjectID, change.updatedProperties?.map(\.name) ?? [])
/// }
/// ```
open class NSPersistentHistoryChange: NSObject, NSCopying {
    /// The object itself: it never changes once made (a subclass of a store you write may
    /// override it).
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// The change's number in its store (`ACHANGE.Z_PK`).
    open private(set) var changeID: Int64
    /// The ID of the object that changed.
    open private(set) var changedObjectID: NSManagedObjectID
    /// Whether the object was inserted, updated or deleted.
    open private(set) var changeType: NSPersistentHistoryChangeType
    /// For a deletion, the values of the attributes marked `preservesValueInHistoryOnDeletion`,
    /// by attribute name; `nil` otherwise, and when none was kept.
    open private(set) var tombstone: [AnyHashable: Any]?
    /// For an update, the properties it changed; `nil` otherwise.
    open private(set) var updatedProperties: Set<NSPropertyDescription>?
    /// The transaction the change belongs to. (Held weakly when the transaction holds the
    /// change, in results with transactions; strongly in results of changes only.)
    open var transaction: NSPersistentHistoryTransaction? { ownedTransaction ?? linkedTransaction }
    internal weak var linkedTransaction: NSPersistentHistoryTransaction?
    internal var ownedTransaction: NSPersistentHistoryTransaction?
    /// The changed object's `Z_ENT` in its store (the `changedEntity` of history fetch requests).
    internal let changedEntityNumber: Int64

    internal init(changeID: Int64, changedObjectID: NSManagedObjectID, changedEntityNumber: Int64, changeType: NSPersistentHistoryChangeType,
                  tombstone: [AnyHashable: Any]?, updatedProperties: Set<NSPropertyDescription>?) {
        self.changeID = changeID
        self.changedEntityNumber = changedEntityNumber
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.tombstone = tombstone
        self.updatedProperties = updatedProperties
        super.init()
    }

    /// The entity history fetch requests filter changes by: `changeID`, `changeType`,
    /// `changedEntity` (the changed object's `Z_ENT`; compared with entity descriptions,
    /// `changedEntity == %@` with `Note.entity()`, the changed object's entity) and `changedObjectID`.
    ///
    /// ```swift
    /// let entity = NSPersistentHistoryChange.entityDescription!
    /// ```
    open class var entityDescription: NSEntityDescription? { HistoryFetchModel.change }

    /// ``entityDescription``, for any context.
    ///
    /// ```swift
    /// let entity = NSPersistentHistoryChange.entityDescription(with: context)
    /// ```
    open class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? { HistoryFetchModel.change }

    /// A fetch request of ``entityDescription``, to filter the changes of a history request.
    ///
    /// ```swift
    /// let changes = NSPersistentHistoryChange.fetchRequest!
    /// changes.predicate = NSPredicate(format: "changeType == %d", NSPersistentHistoryChangeType.delete.rawValue)
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: token)
    /// request.fetchRequest = changes
    /// ```
    open class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? { HistoryFetchModel.request(HistoryFetchModel.change) }

    open override var description: String {
        "<NSPersistentHistoryChange: changeID \(changeID) changedObjectID \(changedObjectID) changeType \(changeType)>"
    }
}
