import Foundation

/// What executing an ``NSBatchDeleteRequest`` returns.
///
/// ```swift
/// let result = try context.execute(request) as! NSBatchDeleteResult
/// let deleted = result.result as! Int   // request.resultType = .resultTypeCount
/// ```
open class NSBatchDeleteResult: NSPersistentStoreResult {
    /// `true`, an `[NSManagedObjectID]` or an `Int`, as ``resultType`` says.
    open private(set) var result: Any?
    /// The kind of ``result``: the request's.
    open private(set) var resultType: NSBatchDeleteRequestResultType

    internal init(resultType: NSBatchDeleteRequestResultType, result: Any?) {
        self.resultType = resultType
        self.result = result
        super.init()
    }
}
