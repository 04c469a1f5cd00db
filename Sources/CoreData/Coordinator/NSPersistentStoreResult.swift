import Foundation

/// What ``NSManagedObjectContext/execute(_:)`` returns: the base class of Core Data's request
/// results.
///
/// ```swift
/// let result = try context.execute(NSFetchRequest<NSManagedObject>(entityName: "Car"))
/// let cars = (result as? NSAsynchronousFetchResult<NSManagedObject>)?.finalResult ?? []
/// ```
open class NSPersistentStoreResult: NSObject {
    /// A result with nothing in it (subclasses carry the request's outcome).
    public override init() { super.init() }
}
