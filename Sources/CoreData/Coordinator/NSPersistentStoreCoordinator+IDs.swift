import Foundation

extension NSPersistentStoreCoordinator {
    /// `id` as this coordinator's: itself when its store is one of this coordinator's (or it is
    /// temporary); the ID of the same row when it comes from another coordinator on the same store
    /// file (same store UUID); `nil` when this coordinator has no such store.
    internal func ownID(for id: NSManagedObjectID) -> NSManagedObjectID? {
        guard let store = id.persistentStore else { return id }
        if persistentStores.contains(where: { $0 === store }) { return id }
        guard let own = try? ownStore(of: id), let name = id.entity.name, let entity = managedObjectModel.entitiesByName[name] else {
            return nil
        }
        return NSManagedObjectID(entity: entity, store: own, primaryKey: id.key.value)
    }
}
