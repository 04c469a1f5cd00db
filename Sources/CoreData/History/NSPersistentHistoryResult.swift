import Foundation

/// What an ``NSPersistentHistoryChangeRequest`` returns: Apple's values.
///
/// ```swift
/// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: token)
/// request.resultType = .changesOnly
/// ```
public enum NSPersistentHistoryResultType: Int, Sendable {
    /// Whether the request succeeded (`true`).
    case statusOnly = 0
    /// The IDs of the objects that changed, in change order.
    case objectIDs = 1
    /// How many transactions there are (fetched, or deleted).
    case count = 2
    /// The transactions, without their changes.
    case transactionsOnly = 3
    /// The changes, each with its transaction.
    case changesOnly = 4
    /// The transactions with their changes (the default).
    case transactionsAndChanges = 5
}

/// The result of an ``NSPersistentHistoryChangeRequest`` run by
/// ``NSManagedObjectContext/execute(_:)``: ``result`` is what ``resultType`` says.
///
/// ```swift
/// let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: date)) as! NSPersistentHistoryResult
/// let transactions = result.result as? [NSPersistentHistoryTransaction] ?? []
/// ```
open class NSPersistentHistoryResult: NSPersistentStoreResult {
    /// `true` (status), `[NSManagedObjectID]`, an `Int` count, `[NSPersistentHistoryTransaction]`
    /// or `[NSPersistentHistoryChange]`.
    open private(set) var result: Any?
    /// The kind of ``result``.
    open private(set) var resultType: NSPersistentHistoryResultType

    internal init(result: Any?, resultType: NSPersistentHistoryResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}
