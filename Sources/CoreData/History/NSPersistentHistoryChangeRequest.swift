import Foundation

/// A request to fetch or to purge the persistent history of the stores that record it
/// (``NSPersistentHistoryTrackingKey``), run by ``NSManagedObjectContext/execute(_:)``.
///
/// ```swift
/// // What happened since the last token this app processed:
/// let fetch = NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let result = try context.execute(fetch) as! NSPersistentHistoryResult
/// let transactions = result.result as? [NSPersistentHistoryTransaction] ?? []
/// // Purge what every reader has processed:
/// _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: lastToken))
/// ```
///
/// A fetch after a token or transaction returns the transactions after it; a purge before one
/// deletes those before it (the token's own transaction stays, so the token stays valid). A fetch
/// after a token throws `NSPersistentHistoryTokenExpiredError` (134301) when a transaction after
/// it was purged (its own may be gone: what follows it is whole); a request to a store that does
/// not record history throws 134091. A fetch request's predicate, sort descriptors, offset and
/// limit apply to what it fetches.
open class NSPersistentHistoryChangeRequest: NSPersistentStoreRequest {
    /// A copy of the request, with its options (and its own copy of the fetch request).
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSPersistentHistoryChangeRequest(boundary: boundary, isDelete: isDelete)
        copy.affectedStores = affectedStores
        copy.resultType = resultType
        copy.fetchRequest = fetchRequest?.copy() as? NSFetchRequest<NSFetchRequestResult>
        return copy
    }

    /// Where the request's history starts (a fetch) or ends (a purge).
    internal enum Boundary {
        case date(Date)
        case token(NSPersistentHistoryToken?)
        case transaction(NSPersistentHistoryTransaction?)
    }
    internal let boundary: Boundary
    /// Whether the request purges history (`deleteHistory(before:)`) rather than fetching it.
    internal let isDelete: Bool

    /// What the request returns; ``NSPersistentHistoryResultType/transactionsAndChanges`` by default.
    open var resultType: NSPersistentHistoryResultType = .transactionsAndChanges
    /// Filters what the request fetches: a fetch request of
    /// ``NSPersistentHistoryTransaction/fetchRequest`` (transactions whose keys match its
    /// predicate) or ``NSPersistentHistoryChange/fetchRequest`` (changes that match; transactions
    /// left without any are dropped), with its `fetchLimit` and `fetchOffset` on the transactions
    /// (the changes for ``NSPersistentHistoryResultType/changesOnly`` and
    /// ``NSPersistentHistoryResultType/objectIDs``). Fetches only; a purge ignores it.
    open var fetchRequest: NSFetchRequest<NSFetchRequestResult>?
    /// The token the request was made with, if any.
    open var token: NSPersistentHistoryToken? {
        if case .token(let token) = boundary { return token }
        return nil
    }

    internal init(boundary: Boundary, isDelete: Bool) {
        self.boundary = boundary
        self.isDelete = isDelete
        super.init()
    }

    /// The transactions committed after `date`.
    ///
    /// ```swift
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: Date().addingTimeInterval(-3600))
    /// ```
    open class func fetchHistory(after date: Date) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(boundary: .date(date), isDelete: false)
    }

    /// The transactions after `token`'s, in each store it names (all of a store's history for
    /// a store it does not name, or a `nil` token).
    ///
    /// ```swift
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: lastToken)
    /// ```
    open class func fetchHistory(after token: NSPersistentHistoryToken?) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(boundary: .token(token), isDelete: false)
    }

    /// The transactions after `transaction` (all of them for `nil`).
    ///
    /// ```swift
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(after: lastTransaction)
    /// ```
    open class func fetchHistory(after transaction: NSPersistentHistoryTransaction?) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(boundary: .transaction(transaction), isDelete: false)
    }

    /// All the history that `fetchRequest` selects (see ``fetchRequest``).
    ///
    /// ```swift
    /// let transactions = NSPersistentHistoryTransaction.fetchRequest!
    /// transactions.predicate = NSPredicate(format: "author == %@", "importer")
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetch: transactions)
    /// ```
    open class func fetchHistory(withFetch fetchRequest: NSFetchRequest<NSFetchRequestResult>) -> NSPersistentHistoryChangeRequest {
        fetchHistory(withFetchRequest: fetchRequest)
    }

    /// ``fetchHistory(withFetch:)`` (the Objective-C selector's full name, which Swift shortens).
    ///
    /// ```swift
    /// let request = NSPersistentHistoryChangeRequest.fetchHistory(withFetchRequest: transactions)
    /// ```
    open class func fetchHistory(withFetchRequest fetchRequest: NSFetchRequest<NSFetchRequestResult>) -> NSPersistentHistoryChangeRequest {
        let request = NSPersistentHistoryChangeRequest(boundary: .token(nil), isDelete: false)
        request.fetchRequest = fetchRequest
        return request
    }

    /// Purges the transactions committed before `date`.
    ///
    /// ```swift
    /// _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: Date().addingTimeInterval(-7 * 86400)))
    /// ```
    open class func deleteHistory(before date: Date) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(boundary: .date(date), isDelete: true)
    }

    /// Purges the transactions before `token`'s (not its own), in each store it names (a store
    /// it does not name keeps its history); every store's whole history for a `nil` token.
    ///
    /// ```swift
    /// _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: processedToken))
    /// ```
    open class func deleteHistory(before token: NSPersistentHistoryToken?) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(boundary: .token(token), isDelete: true)
    }

    /// Purges the transactions before `transaction` (not itself), in its store; every store's
    /// whole history for `nil`.
    ///
    /// ```swift
    /// _ = try context.execute(NSPersistentHistoryChangeRequest.deleteHistory(before: transaction))
    /// ```
    open class func deleteHistory(before transaction: NSPersistentHistoryTransaction?) -> NSPersistentHistoryChangeRequest {
        NSPersistentHistoryChangeRequest(boundary: .transaction(transaction), isDelete: true)
    }

    /// Whether the request's bound concerns the store `storeID`: a date, a `nil` token or
    /// transaction (every store), a token with an entry for it, its own transaction. A purge
    /// leaves a store it does not concern alone (a token of another store purges nothing of this
    /// one's history).
    internal func names(store storeID: String) -> Bool {
        switch boundary {
        case .date: return true
        case .token(let token): return token.map { $0.storeTokens[storeID] != nil } ?? true
        case .transaction(let transaction): return transaction.map { $0.storeID == storeID } ?? true
        }
    }

    /// The request's bound in the store `storeID`, as `ATRANSACTION` sees it: a transaction
    /// number or a timestamp (seconds since 2001); `nil` for no bound.
    internal func bound(forStore storeID: String) -> HistoryBound? {
        switch boundary {
        case .date(let date): return .timestamp(date.timeIntervalSinceReferenceDate)
        case .token(let token): return token?.storeTokens[storeID].map(HistoryBound.number)
        case .transaction(let transaction):
            guard let transaction, transaction.storeID == storeID else { return nil }
            return .number(transaction.transactionNumber)
        }
    }

    open override var description: String {
        "<NSPersistentHistoryChangeRequest: \(isDelete ? "delete before" : "fetch after") \(boundary) resultType \(resultType)>"
    }
}

extension NSPersistentHistoryChangeRequest {
    /// The request's bound in `store` for a fetch after it, once a token's is known to be
    /// current there (134301 when history after it may have been purged).
    fileprivate func fetchBound(in store: any HistoryRecordingStore) throws -> HistoryBound? {
        let bound = bound(forStore: store.identifier)
        if case .token = boundary, case .number(let number)? = bound { try store.checkHistoryToken(number) }
        return bound
    }
}

/// Where a history request starts or ends in one store.
internal enum HistoryBound {
    /// A transaction number (`ATRANSACTION.Z_PK`), from a token or a transaction.
    case number(Int64)
    /// A time, in seconds since 2001 (`ATRANSACTION.ZTIMESTAMP`).
    case timestamp(Double)
}

extension NSPersistentHistoryChangeRequest: ContextExecutableRequest {
    func execute(in context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        guard let coordinator = context.persistentStoreCoordinator else {
            throw CoreDataError.make(.persistentStoreOperation, "The context has no persistent store coordinator to run the history request on")
        }
        var stores: [any HistoryRecordingStore] = []
        for store in affectedStores ?? coordinator.persistentStores {
            guard let recording = store as? any HistoryRecordingStore, recording.history != nil else {
                throw CoreDataError.make(.unsupportedRequestType,
                    "History Change Request failed as no history tracking option detected on store \(store.identifier ?? "") at \(store.url?.path ?? "")")
            }
            stores.append(recording)
        }
        if isDelete {
            var deleted = 0
            for store in stores where names(store: store.identifier) {
                deleted += try store.deleteHistory(before: bound(forStore: store.identifier))
            }
            return NSPersistentHistoryResult(result: resultType == .count ? deleted : true, resultType: resultType == .count ? .count : .statusOnly)
        }
        if resultType == .count && fetchRequest == nil {
            // The number of changes, as Apple documents `.count` ("the number of persistent
            // history changes since…"), counted in SQL: nothing is loaded.
            var count = 0
            for store in stores { count += try store.countHistoryChanges(after: fetchBound(in: store)) }
            return NSPersistentHistoryResult(result: count, resultType: .count)
        }
        var transactions: [NSPersistentHistoryTransaction] = []
        for store in stores {
            transactions += try store.fetchHistory(after: fetchBound(in: store), withChanges: resultType != .transactionsOnly || fetchRequest != nil)
        }
        let filter = try HistoryFilter(fetchRequest)
        transactions = filter.transactions(transactions, changesAreResults: [.changesOnly, .objectIDs, .count].contains(resultType))
        let changes = { filter.limited(transactions.flatMap { transaction in transaction.changes ?? [] }) }
        // (`.count` with a fetch request: the changes it keeps.)
        let changeCount = resultType == .count ? changes().count : 0
        if resultType == .transactionsOnly || resultType == .count { for transaction in transactions { transaction.changes = nil } }
        let result: Any
        switch resultType {
        case .statusOnly: result = true
        case .count: result = changeCount
        case .objectIDs: result = changes().map(\.changedObjectID)
        case .transactionsOnly, .transactionsAndChanges: result = transactions
        case .changesOnly:
            let all = changes()
            for change in all { change.ownedTransaction = change.linkedTransaction }
            for transaction in transactions { transaction.changes = nil }
            result = all
        }
        return NSPersistentHistoryResult(result: result, resultType: resultType)
    }
}

/// A history request's ``NSPersistentHistoryChangeRequest/fetchRequest``, applied to what the
/// stores returned: its predicate on the transactions or the changes, its sort descriptors, its
/// offset and limit.
private struct HistoryFilter {
    let predicate: PredicateNode?
    let filtersChanges: Bool
    let offset: Int
    let limit: Int
    /// The request's sort, applied before its offset and limit (the stores give transaction order).
    let sortKeys: [SortKey]

    init(_ request: NSFetchRequest<NSFetchRequestResult>?) throws {
        guard let request else {
            (predicate, filtersChanges, offset, limit, sortKeys) = (nil, false, 0, 0, [])
            return
        }
        switch request.entity?.name ?? request.entityName {
        case "Transaction": filtersChanges = false
        case "Change": filtersChanges = true
        default:
            throw CoreDataError.make(.unsupportedRequestType,
                "A history request's fetch request must be NSPersistentHistoryTransaction.fetchRequest or NSPersistentHistoryChange.fetchRequest, not one of the entity '\(request.entityName ?? "nil")'")
        }
        let entity = filtersChanges ? HistoryFetchModel.change : HistoryFetchModel.transaction
        let tree = try request.predicate.map { try PredicateBridge.tree(of: $0).runningFetchRequestExpressions() }
        if let tree { try Self.checkKeys(of: tree, in: entity) }
        predicate = filtersChanges ? tree.map(Self.comparingEntitiesByName) : tree
        offset = max(request.fetchOffset, 0)
        limit = request.fetchLimit
        sortKeys = try PredicateBridge.sortKeys(of: request.sortDescriptors ?? [])
        if let unknown = sortKeys.first(where: { $0.path.first.map { entity.attributesByName[$0] == nil } ?? true }) {
            throw PredicateErrors.unsupportedSort("keypath \(unknown.path.isEmpty ? "self" : unknown.keyPath) not found in entity \(entity.name ?? "")")
        }
    }

    /// Refuses a predicate naming a key that `entity` (`Transaction` or `Change`) lacks, which
    /// would otherwise match nothing without a word (a transaction's `author` in a change's
    /// predicate), as Apple's store refuses it.
    private static func checkKeys(of tree: PredicateNode, in entity: NSEntityDescription) throws {
        var unknown: [String]?
        _ = tree.containsExpression { expression in
            guard case .keyPath(let path) = expression, entity.attributesByName[path[0]] == nil else { return false }
            unknown = path
            return true
        }
        guard let unknown else { return }
        throw PredicateErrors.unsupportedPredicate("keypath \(unknown.joined(separator: ".")) not found in entity \(entity.name ?? "")", in: tree)
    }

    /// The predicate with `changedEntity` compared with entity descriptions (`changedEntity ==
    /// %@` with `Post.entity()`, or `IN` a list of them) comparing the changes' entities' names:
    /// a change's `changedEntity` is its store's entity number (`Z_ENT`), which a comparison
    /// with a number still uses.
    private static func comparingEntitiesByName(_ node: PredicateNode) -> PredicateNode {
        func names(_ expression: ExpressionNode) -> ExpressionNode? {
            func name(_ value: PredicateValue) -> PredicateValue? {
                guard case .object(let reference) = value, let entity = reference.object as? NSEntityDescription else { return nil }
                return .string(entity.name ?? "")
            }
            guard case .constant(let value) = expression else { return nil }
            if let single = name(value) { return .constant(single) }
            guard case .collection(let items) = value, !items.isEmpty else { return nil }
            let named = items.compactMap(name)
            return named.count == items.count ? .constant(.collection(named)) : nil
        }
        func isChangedEntity(_ expression: ExpressionNode) -> Bool {
            if case .keyPath(let path) = expression { return path == ["changedEntity"] }
            return false
        }
        let byName = ExpressionNode.keyPath([NSPersistentHistoryChange.changedEntityNameKey])
        switch node {
        case .constant: return node
        case .and(let parts): return .and(parts.map(comparingEntitiesByName))
        case .or(let parts): return .or(parts.map(comparingEntitiesByName))
        case .not(let inner): return .not(comparingEntitiesByName(inner))
        case .comparison(var comparison):
            if isChangedEntity(comparison.lhs), let rhs = names(comparison.rhs) {
                (comparison.lhs, comparison.rhs) = (byName, rhs)
            } else if isChangedEntity(comparison.rhs), let lhs = names(comparison.lhs) {
                (comparison.lhs, comparison.rhs) = (lhs, byName)
            }
            return .comparison(comparison)
        }
    }

    /// The predicate for the transactions of the store `storeID`, with each history token it
    /// compares (`token > %@`, `token IN %@`) as the transaction number the token holds for that
    /// store, which a transaction's `token` key answers (`nil` when the token has none for it).
    private static func comparingTokens(_ node: PredicateNode, ofStore storeID: String) -> PredicateNode {
        func number(_ value: PredicateValue) -> PredicateValue {
            switch value {
            case .object(let reference):
                guard let token = reference.object as? NSPersistentHistoryToken else { return value }
                return token.storeTokens[storeID].map { .int($0) } ?? .null
            case .collection(let items): return .collection(items.map(number))
            default: return value
            }
        }
        return node.replacingExpressions { expression in
            guard case .constant(let value) = expression else { return nil }
            return .constant(number(value))
        }
    }

    /// `items` sorted, from the offset, at most the limit.
    func limited<T>(_ items: [T]) -> [T] {
        let rest = PredicateBridge.sort(items, by: sortKeys).dropFirst(offset)
        return Array(limit > 0 ? rest.prefix(limit) : rest)
    }

    /// The transactions that match, their changes filtered; limited here unless the result is
    /// their changes (`changesAreResults`: the changes are limited then).
    func transactions(_ all: [NSPersistentHistoryTransaction], changesAreResults: Bool) -> [NSPersistentHistoryTransaction] {
        var kept = all
        if let predicate {
            let evaluator = PredicateEvaluator()
            if filtersChanges {
                for transaction in kept { transaction.changes = transaction.changes?.filter { evaluator.evaluate(predicate, object: $0) } }
                kept = kept.filter { !($0.changes ?? []).isEmpty }
            } else {
                var byStore: [String: PredicateNode] = [:] // (the predicate with each store's token numbers)
                kept = kept.filter { transaction in
                    let forStore = byStore[transaction.storeID] ?? Self.comparingTokens(predicate, ofStore: transaction.storeID)
                    byStore[transaction.storeID] = forStore
                    return evaluator.evaluate(forStore, object: transaction)
                }
            }
        }
        return changesAreResults ? kept : limited(kept)
    }
}
