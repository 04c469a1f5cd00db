import Foundation

/// The changes one save (or batch request) made to a store, as its persistent history recorded
/// them, with who made them: the context's `transactionAuthor` and `name`, the bundle and
/// process.
///
/// ```swift
/// let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)) as! NSPersistentHistoryResult
/// for transaction in result.result as? [NSPersistentHistoryTransaction] ?? [] {
///     viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
///     lastToken = transaction.token
/// }
/// ```
open class NSPersistentHistoryTransaction: NSObject, NSCopying {
    /// The object itself: it never changes once made (a subclass of a store you write may
    /// override it).
    open func copy(with zone: NSZone? = nil) -> Any { self }

    /// When the transaction was committed.
    open private(set) var timestamp: Date
    /// Its changes; `nil` in results of transactions only.
    open internal(set) var changes: [NSPersistentHistoryChange]?
    /// The identifier (`NSStoreUUID`) of the store it changed.
    open private(set) var storeID: String
    /// The bundle identifier of the app that made it (the process name when there is none).
    open private(set) var bundleID: String
    /// The name of the process that made it.
    open private(set) var processID: String
    /// The ``NSManagedObjectContext/name`` of the context that saved it.
    open private(set) var contextName: String?
    /// The ``NSManagedObjectContext/transactionAuthor`` of the context that saved it.
    open private(set) var author: String?
    /// Its number in the store (`ATRANSACTION.Z_PK`): the history after it is what comes later.
    open private(set) var transactionNumber: Int64
    /// A token that stands for this transaction: history fetched after it starts after it.
    open var token: NSPersistentHistoryToken { NSPersistentHistoryToken(storeTokens: [storeID: transactionNumber]) }

    /// A transaction with no values (the 2001 reference date, empty strings, number 0, no
    /// changes), for a subclass that overrides the properties it reports: how a store you write
    /// (an ``NSIncrementalStore``) makes up the transactions it answers a history request with,
    /// as on Apple platforms.
    ///
    /// ```swift
    /// final class LogEntry: NSPersistentHistoryTransaction {
    ///     let number: Int64
    ///     init(number: Int64) { self.number = number; super.init() }
    ///     override var transactionNumber: Int64 { number }
    /// }
    /// ```
    public override init() {
        timestamp = Date(timeIntervalSinceReferenceDate: 0)
        storeID = ""
        bundleID = ""
        processID = ""
        transactionNumber = 0
        super.init()
    }

    internal init(timestamp: Date, storeID: String, bundleID: String, processID: String, contextName: String?, author: String?,
                  transactionNumber: Int64) {
        self.timestamp = timestamp
        self.storeID = storeID
        self.bundleID = bundleID
        self.processID = processID
        self.contextName = contextName
        self.author = author
        self.transactionNumber = transactionNumber
        super.init()
    }

    /// A did-save notification of the transaction's object IDs (`inserted_objectIDs`,
    /// `updated_objectIDs`, `deleted_objectIDs`), for
    /// ``NSManagedObjectContext/mergeChanges(fromContextDidSave:)``; empty sets when the
    /// transaction was fetched without its changes.
    ///
    /// ```swift
    /// viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
    /// ```
    open func objectIDNotification() -> Notification {
        var inserted = Set<NSManagedObjectID>(), updated = Set<NSManagedObjectID>(), deleted = Set<NSManagedObjectID>()
        for change in changes ?? [] {
            switch change.changeType {
            case .insert: inserted.insert(change.changedObjectID)
            case .update: updated.insert(change.changedObjectID)
            case .delete: deleted.insert(change.changedObjectID)
            }
        }
        return Notification(name: .NSManagedObjectContextDidSave, object: self, userInfo: [
            NSInsertedObjectIDsKey: inserted, NSUpdatedObjectIDsKey: updated, NSDeletedObjectIDsKey: deleted])
    }

    /// The entity history fetch requests filter transactions by: `author`, `bundleID`,
    /// `contextName`, `processID`, `timestamp`, `transactionNumber` and `token` (its number).
    ///
    /// ```swift
    /// let entity = NSPersistentHistoryTransaction.entityDescription!
    /// ```
    open class var entityDescription: NSEntityDescription? { HistoryFetchModel.transaction }

    /// ``entityDescription``, for any context.
    ///
    /// ```swift
    /// let entity = NSPersistentHistoryTransaction.entityDescription(with: context)
    /// ```
    open class func entityDescription(with context: NSManagedObjectContext) -> NSEntityDescription? { HistoryFetchModel.transaction }

    /// A fetch request of ``entityDescription``, to filter the transactions of a history request.
    ///
    /// ```swift
    /// let transactions = NSPersistentHistoryTransaction.fetchRequest!
    /// transactions.predicate = NSPredicate(format: "author != %@", "importer")
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: token)
    /// request.fetchRequest = transactions
    /// ```
    open class var fetchRequest: NSFetchRequest<NSFetchRequestResult>? { HistoryFetchModel.request(HistoryFetchModel.transaction) }

    open override var description: String {
        "<NSPersistentHistoryTransaction: transactionNumber \(transactionNumber) timestamp \(timestamp) author \(author ?? "nil") contextName \(contextName ?? "nil") changes \(changes?.count ?? 0)>"
    }
}
