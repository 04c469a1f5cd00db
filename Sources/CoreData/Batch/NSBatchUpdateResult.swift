import Foundation

/// What executing an ``NSBatchUpdateRequest`` returns.
///
/// ```swift
/// let result = try context.execute(request) as! NSBatchUpdateResult
/// let updated = result.result as! Int   // request.resultType = .updatedObjectsCountResultType
/// ```
open class NSBatchUpdateResult: NSPersistentStoreResult {
    /// `true`, an `[NSManagedObjectID]` or an `Int`, as ``resultType`` says.
    open private(set) var result: Any?
    /// The kind of ``result``: the request's.
    open private(set) var resultType: NSBatchUpdateRequestResultType

    internal init(resultType: NSBatchUpdateRequestResultType, result: Any?) {
        self.resultType = resultType
        self.result = result
        super.init()
    }
}
