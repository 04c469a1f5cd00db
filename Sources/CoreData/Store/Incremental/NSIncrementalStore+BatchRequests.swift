import Foundation

// Batch requests (`NSBatchInsertRequest`, `NSBatchUpdateRequest`, `NSBatchDeleteRequest`) and
// persistent history requests (`NSPersistentHistoryChangeRequest`) run by a context whose
// coordinator sends them to an `NSIncrementalStore`: the store's `execute(_:with:)` answers the
// request as it is, as on Apple platforms. Its result comes back to the caller: an
// `NSPersistentStoreResult` as it is, or, for a batch request, the value of the request's result
// type (a count, the object IDs, `true`), which is wrapped in the request's result class. A store
// that does not answer such a request throws, and its error reaches the caller.

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
    /// `request` (a batch or history request of `context`) answered by `execute(_:with:)`; a
    /// result that is neither the request's result nor its value throws 134070 naming it.
    func answer(_ request: NSPersistentStoreRequest, context: NSManagedObjectContext) throws -> NSPersistentStoreResult {
        requestLock.lock()
        defer { requestLock.unlock() }
        let result = try execute(request, with: context)
        if let result = result as? NSPersistentStoreResult { return result }
        func value(_ wantsIDs: Bool, _ wantsCount: Bool) throws -> Any {
            if wantsIDs, let ids = result as? [NSManagedObjectID] { return ids }
            if wantsCount, let count = StoreValue.integer(result) { return Int(count) }
            if !wantsIDs && !wantsCount, let done = result as? Bool { return done }
            throw wrongResult(result, "an NSPersistentStoreResult, or \(wantsIDs ? "[NSManagedObjectID]" : wantsCount ? "a count" : "a Bool") for a \(Swift.type(of: request)) of that result type")
        }
        switch request {
        case let delete as NSBatchDeleteRequest:
            return NSBatchDeleteResult(resultType: delete.resultType,
                                       result: try value(delete.resultType == .resultTypeObjectIDs, delete.resultType == .resultTypeCount))
        case let update as NSBatchUpdateRequest:
            return NSBatchUpdateResult(resultType: update.resultType,
                                       result: try value(update.resultType == .updatedObjectIDsResultType, update.resultType == .updatedObjectsCountResultType))
        case let insert as NSBatchInsertRequest:
            return NSBatchInsertResult(resultType: insert.resultType, result: try value(insert.resultType == .objectIDs, insert.resultType == .count))
        default:
            throw wrongResult(result, "an NSPersistentHistoryResult for a \(Swift.type(of: request))")
        }
    }
}
