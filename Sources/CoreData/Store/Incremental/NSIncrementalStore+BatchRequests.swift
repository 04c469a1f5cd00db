import Foundation

// Batch requests (`NSBatchInsertRequest`, `NSBatchUpdateRequest`, `NSBatchDeleteRequest`) and
// persistent history requests (`NSPersistentHistoryChangeRequest`) run by a context whose
// coordinator sends them to an `NSIncrementalStore`: the store's `execute(_:with:)` answers the
// request as it is, as on Apple platforms. Its result comes back to the caller: a result of the
// request's result class (`NSBatchInsertResult`, …, `NSPersistentHistoryResult`) as it is, or the
// value of the request's result type (a count, the object IDs, `true`, the transactions or the
// changes), which is wrapped in that class. A store that does not answer such a request throws,
// and its error reaches the caller; a result of another kind throws 134070.

extension NSPersistentStoreCoordinator {
    /// The store you write that a batch or history request goes to: the first store the request
    /// targets (holding its entity, among its `affectedStores` if given), if it is an
    /// `NSIncrementalStore`; `nil` for other requests and other stores.
    internal func incrementalStore(answering request: NSPersistentStoreRequest) -> NSIncrementalStore? {
        let model = managedObjectModel
        let entity: NSEntityDescription?
        switch request {
        case let insert as NSBatchInsertRequest: entity = insert.entity ?? model.entitiesByName[insert.entityName]
        case let update as NSBatchUpdateRequest: entity = update.entity ?? model.entitiesByName[update.entityName]
        case let delete as NSBatchDeleteRequest:
            entity = delete.fetchRequest.entity ?? delete.fetchRequest.entityName.flatMap { model.entitiesByName[$0] }
        case is NSPersistentHistoryChangeRequest: entity = nil
        default: return nil
        }
        var targets = entity.map { stores(for: $0) } ?? persistentStores
        if let affected = request.affectedStores { targets = targets.filter { target in affected.contains { $0 === target } } }
        return targets.first as? NSIncrementalStore
    }
}

extension NSIncrementalStore {
    /// The value a request's result type asks a store for.
    private enum ResultValue: String {
        case status = "true", count = "a count", objectIDs = "[NSManagedObjectID]"
        case transactions = "[NSPersistentHistoryTransaction]", changes = "[NSPersistentHistoryChange]"
    }

    /// `request` (a batch or history request of `context`) answered by `execute(_:with:)`: a
    /// result of the request's result class as it is, or the value its result type asks for,
    /// wrapped in one; anything else throws 134070 naming it.
    func answer(_ request: NSPersistentStoreRequest, context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        requestLock.lock()
        defer { requestLock.unlock() }
        let result = try execute(request, with: context)
        func value<Result: NSPersistentStoreResult>(_ wanted: ResultValue, for _: Result.Type) throws -> Any {
            switch wanted {
            case .objectIDs: if let ids = result as? [NSManagedObjectID] { return ids }
            case .count: if let count = StoreValue.integer(result) { return Int(count) }
            case .status: if let done = result as? Bool { return done }
            case .transactions: if let transactions = result as? [NSPersistentHistoryTransaction] { return transactions }
            case .changes: if let changes = result as? [NSPersistentHistoryChange] { return changes }
            }
            throw wrongResult(result, "an \(Result.self), or \(wanted.rawValue) for a \(Swift.type(of: request)) of that result type")
        }
        switch request {
        case let delete as NSBatchDeleteRequest:
            if let answered = result as? NSBatchDeleteResult { return answered }
            let wanted: ResultValue = delete.resultType == .resultTypeObjectIDs ? .objectIDs : delete.resultType == .resultTypeCount ? .count : .status
            return NSBatchDeleteResult(resultType: delete.resultType, result: try value(wanted, for: NSBatchDeleteResult.self))
        case let update as NSBatchUpdateRequest:
            if let answered = result as? NSBatchUpdateResult { return answered }
            let wanted: ResultValue = update.resultType == .updatedObjectIDsResultType ? .objectIDs
                : update.resultType == .updatedObjectsCountResultType ? .count : .status
            return NSBatchUpdateResult(resultType: update.resultType, result: try value(wanted, for: NSBatchUpdateResult.self))
        case let insert as NSBatchInsertRequest:
            if let answered = result as? NSBatchInsertResult { return answered }
            let wanted: ResultValue = insert.resultType == .objectIDs ? .objectIDs : insert.resultType == .count ? .count : .status
            return NSBatchInsertResult(resultType: insert.resultType, result: try value(wanted, for: NSBatchInsertResult.self))
        case let history as NSPersistentHistoryChangeRequest:
            if let answered = result as? NSPersistentHistoryResult { return answered }
            let resultType = history.resultType
            let wanted: ResultValue = switch resultType {
            case .statusOnly: .status
            case .count: .count
            case .objectIDs: .objectIDs
            case .transactionsOnly, .transactionsAndChanges: .transactions
            case .changesOnly: .changes
            }
            return NSPersistentHistoryResult(result: try value(wanted, for: NSPersistentHistoryResult.self), resultType: resultType)
        default:
            throw CoreDataError.make(.unsupportedRequestType, "\(Swift.type(of: self)) can't answer a \(Swift.type(of: request)) here")
        }
    }
}
