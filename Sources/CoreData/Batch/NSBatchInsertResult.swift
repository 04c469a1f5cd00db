import Foundation

/// What executing an ``NSBatchInsertRequest`` returns.
///
/// ```swift
/// let result = try context.execute(request) as! NSBatchInsertResult
/// let count = result.result as! Int   // request.resultType = .count
/// ```
open class NSBatchInsertResult: NSPersistentStoreResult {
    /// `true`, an `[NSManagedObjectID]` or an `Int`, as ``resultType`` says.
    open private(set) var result: Any?
    /// The kind of ``result``: the request's.
    open private(set) var resultType: NSBatchInsertRequestResultType

    internal init(resultType: NSBatchInsertRequestResultType, result: Any?) {
        self.resultType = resultType
        self.result = result
        super.init()
    }
}
