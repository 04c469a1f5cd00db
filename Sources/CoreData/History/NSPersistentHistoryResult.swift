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
    /// How many changes a fetch returns (as Apple's), or how many transactions a purge deleted.
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

    /// A result with no value (`nil`, of type `.statusOnly`), for a subclass that overrides
    /// ``result`` and ``resultType``: what a store you write (an ``NSIncrementalStore``) may
    /// answer a history request with, as on Apple platforms. (It may also return the value
    /// alone, which the context wraps in a result of the request's type.)
    ///
    /// ```swift
    /// final class LogResult: NSPersistentHistoryResult {
    ///     override var result: Any? { entries }
    ///     override var resultType: NSPersistentHistoryResultType { .transactionsOnly }
    /// }
    /// ```
    public override init() {
        resultType = .statusOnly
        super.init()
    }

    internal init(result: Any?, resultType: NSPersistentHistoryResultType) {
        self.result = result
        self.resultType = resultType
        super.init()
    }
}
