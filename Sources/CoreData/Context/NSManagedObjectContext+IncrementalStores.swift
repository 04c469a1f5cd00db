import Foundation

extension NSManagedObjectContext {
    /// Before a save writes a store you write (`NSIncrementalStore`, `NSAtomicStore`), its new
    /// objects get their permanent IDs from the store (`obtainPermanentIDs(for:)`,
    /// `newReferenceObject(for:)`), as on Apple platforms: the store's
    /// `execute(_:with:)` then sees each object under the ID it will keep. (Only for
    /// coordinators that have such a store: the built-in stores allocate keys in their save.)
    internal func obtainPermanentIDsForIncrementalStores(_ coordinator: NSPersistentStoreCoordinator) throws {
        var pending: [NSManagedObject] = []
        for object in inserted.objects where object.objectID.isTemporaryID {
            if try store(forNew: object, in: coordinator).makesIDsOfObjects { pending.append(object) }
        }
        if !pending.isEmpty { try obtainPermanentIDs(for: pending) }
    }
}
