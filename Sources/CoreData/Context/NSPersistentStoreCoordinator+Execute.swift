import Foundation

// The coordinator's `execute(_:with:)` runs a request for a context, so it lives with the
// contexts (the coordinator layer below knows no context): it is the context's own paths,
// reached from the coordinator as Apple's API reaches them.

/// A fetch request, whatever its result type, as ``NSPersistentStoreCoordinator/execute(_:with:)``
/// runs it.
internal protocol StoreFetchRequest {
    /// The results of the request in the stores, as `context` registers them: its unsaved
    /// changes are not looked at (`includesPendingChanges` false). Whatever the request's result
    /// type parameter: the results are what its `resultType` asks for.
    func storeResults(in context: NSManagedObjectContext) throws -> [Any]
}

extension NSFetchRequest: StoreFetchRequest {
    func storeResults(in context: NSManagedObjectContext) throws -> [Any] {
        let request = copiedRequest(as: Any.self)
        request.includesPendingChanges = false
        return try context.fetch(request)
    }
}

extension NSPersistentStoreCoordinator {
    /// Executes `request` on the coordinator's stores on behalf of `context`, as Apple's does.
    ///
    /// - A fetch request returns an array of what its `resultType` asks for (objects registered
    ///   in `context`, object IDs, dictionaries, or one `NSNumber` for `.countResultType`), from
    ///   the stores' rows (of its `affectedStores`, if given): `context`'s unsaved changes are not
    ///   looked at, as for a fetch whose `includesPendingChanges` is false. (For a child context
    ///   the rows come through its parent, as all its reads do, with the parent's unsaved changes.)
    /// - A batch insert, update or delete request, a persistent history request or an
    ///   asynchronous fetch request returns its result (`NSBatchDeleteResult`, …), as
    ///   `context.execute(_:)` does.
    ///
    /// ```swift
    /// let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest(entityName: "Item"))
    /// delete.resultType = .resultTypeObjectIDs
    /// let result = try container.persistentStoreCoordinator.execute(delete, with: context) as? NSBatchDeleteResult
    /// ```
    ///
    /// Call it on `context`'s queue. Throws 134060 when `context` has no coordinator or saves to
    /// another one,
    /// `NSPersistentStoreUnsupportedRequestTypeError` (134091) for an `NSSaveChangesRequest`
    /// (save the context instead) or a request of another kind, and the request's error
    /// otherwise.
    @discardableResult
    public func execute(_ request: NSPersistentStoreRequest, with context: NSManagedObjectContext) throws -> Any {
        context.checkQueue("execute(_:with:)")
        guard let coordinator = context.persistentStoreCoordinator else {
            throw CoreDataError.make(.coreData, "execute(_:with:): the context has no persistent store coordinator")
        }
        guard coordinator === self else {
            throw CoreDataError.make(.coreData, "execute(_:with:): the context \(context.name.map { "'\($0)' " } ?? "")saves to another persistent store coordinator than the one asked to execute its \(type(of: request))")
        }
        if let fetch = request as? StoreFetchRequest {
            return try fetch.storeResults(in: context)
        }
        if request is NSSaveChangesRequest {
            throw CoreDataError.make(.unsupportedRequestType, "execute(_:with:) does not run an NSSaveChangesRequest here: call save() on the context, which sends its changes to the stores")
        }
        return try context.execute(request)
    }
}
