import Foundation

extension NSManagedObjectContext {
    /// Specifies the store a newly inserted object will be saved in, among several stores of
    /// the coordinator that hold its entity (by default the first of them).
    ///
    /// ```swift
    /// let note = Note(context: context)
    /// context.assign(note, to: archiveStore)
    /// try context.save() // the note's row is written to archiveStore
    /// ```
    ///
    /// The assignment goes with the object to a parent context when a child saves it. It has no
    /// effect on an object that is not new, or whose permanent ID was obtained already (that ID
    /// names its store). `obtainPermanentIDs(for:)` takes the ID from the assigned store.
    ///
    /// Traps, as Apple's raises, when `object` is not a managed object of this context, or when
    /// `store` is not one of the coordinator's stores holding the object's entity: a programmer
    /// error, on a method that cannot throw.
    public func assign(_ object: Any, to store: NSPersistentStore) {
        checkQueue("assign(_:to:)")
        guard let object = object as? NSManagedObject else {
            preconditionFailure("CoreData: assign(_:to:) takes a managed object; got a \(type(of: object))")
        }
        precondition(object._context === self, "CoreData: assign(_:to:) takes an object of this context; \(object.objectID) is not")
        guard let coordinator = persistentStoreCoordinator else {
            preconditionFailure("CoreData: assign(_:to:): the context has no persistent store coordinator")
        }
        precondition(coordinator.stores(for: object.entity).contains { $0 === store },
                     "CoreData: Can't assign an object to a store that does not contain the object's entity ('\(object.entity.name ?? "")' is not held by the store at \(store.url?.path ?? "nil"))")
        guard object._isInserted, object.objectID.isTemporaryID else { return }
        object.extras.assignedStore = store
    }

    /// The store a new object is saved in: the one it was assigned to (``assign(_:to:)``), which
    /// must still be the coordinator's, or the first store holding its entity.
    internal func store(forNew object: NSManagedObject, in coordinator: NSPersistentStoreCoordinator) throws -> NSPersistentStore {
        guard let assigned = object._extras?.assignedStore else { return try coordinator.store(forNew: object.entity) }
        guard coordinator.stores(for: object.entity).contains(where: { $0 === assigned }) else {
            throw CoreDataError.make(.persistentStoreOperation,
                "The store at \(assigned.url?.path ?? "nil") that a new '\(object.entity.name ?? "")' was assigned to is no longer one of the coordinator's stores")
        }
        return assigned
    }
}
