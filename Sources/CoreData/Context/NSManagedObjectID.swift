import Foundation
import Synchronization

/// The identity of a managed object: its entity, its store and its primary key. Safe to pass
/// between queues and contexts; fetch the object in another context with
/// ``NSManagedObjectContext/object(with:)`` or ``NSManagedObjectContext/existingObject(with:)``.
///
/// An object inserted into a context has a *temporary* ID until it is saved (or
/// ``NSManagedObjectContext/obtainPermanentIDs(for:)`` is called); then it gets a permanent one.
///
/// ```swift
/// let id = car.objectID            // x-coredata://<store UUID>/Car/p1 once saved
/// let same = try context.existingObject(with: id)
/// ```
open class NSManagedObjectID: NSObject, NSCopying, @unchecked Sendable {
    /// The entity of the object.
    public let entity: NSEntityDescription
    /// The store that holds the object; `nil` while the ID is temporary. (A strong reference: a
    /// weak one costs a side-table operation per ID, and IDs are made for every fetched row.)
    public let persistentStore: NSPersistentStore?
    internal let key: IDKey

    internal init(entity: NSEntityDescription, store: NSPersistentStore, primaryKey: Int64) {
        self.entity = entity
        self.persistentStore = store
        self.key = IDKey(store: store.tag, root: entity.layout.rootNumber, value: primaryKey)
        super.init()
    }

    internal init(temporaryFor entity: NSEntityDescription) {
        self.entity = entity
        self.persistentStore = nil
        self.key = IDKey(store: IDKey.temporaryStore, root: entity.layout.rootNumber,
                         value: IDKey.nextTemporary())
        super.init()
    }

    /// Whether the ID is temporary: the object has not been saved yet.
    open var isTemporaryID: Bool { key.store == IDKey.temporaryStore }

    /// The primary key (`Z_PK`) of a permanent ID; `nil` for a temporary one.
    internal var primaryKey: Int64? { isTemporaryID ? nil : key.value }

    /// A URL that identifies the object across launches:
    /// `x-coredata://<store UUID>/<Entity>/p<primary key>` (temporary: `x-coredata:///<Entity>/t<number>`).
    /// ``NSPersistentStoreCoordinator/managedObjectID(forURIRepresentation:)`` turns it back into an ID.
    open func uriRepresentation() -> URL {
        let name = entity.name ?? ""
        if isTemporaryID {
            return URL(string: "x-coredata:///\(name)/t\(IDKey.processToken)\(key.value)")!
        }
        return URL(string: "x-coredata://\(persistentStore?.identifier ?? "")/\(name)/p\(key.value)")!
    }

    open override var hash: Int { key.hashValue }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSManagedObjectID else { return false }
        return other === self || other.key == key
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override var description: String { "<\(uriRepresentation().absoluteString)>" }
}

/// What makes two object IDs equal, in a form that hashes fast: the store, the root entity's
/// number, and the primary key (or a temporary serial number).
internal struct IDKey: Hashable, Sendable {
    var store: Int
    var root: Int
    var value: Int64

    static let temporaryStore = -1
    private static let counter = AtomicCounter()
    static func nextTemporary() -> Int64 { counter.next() }
    static let processToken = UUID().uuidString
}

/// A thread-safe counter.
internal final class AtomicCounter: Sendable {
    private let value = Atomic<Int64>(0)
    func next() -> Int64 { value.add(1, ordering: .relaxed).newValue }
}
