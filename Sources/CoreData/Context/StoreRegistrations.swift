import Foundation
import Synchronization

/// Which objects of the stores you write (`NSIncrementalStore`) a context started and stopped
/// using, for the stores' `managedObjectContextDidRegisterObjects(with:)` and
/// `managedObjectContextDidUnregisterObjects(with:)`: Apple's reference count of interest in
/// each object's row.
///
/// An ID counts once per context from the moment an object enters the context's registry under
/// a permanent ID of such a store (a fetch, a fault, `object(with:)`, a new object's permanent
/// ID from `obtainPermanentIDs(for:)` or a save) until it leaves it (its `deinit`, a reset, the
/// context going). Temporary IDs belong to no store and are never reported.
///
/// Objects enter and leave the registry under its lock, and leave from their `deinit` on any
/// thread: the store is never called there. The registry notes the IDs (``ObjectRegistry``,
/// only for keys whose store tag has `IDKey.reportedStoreFlag`: the built-in stores' objects cost
/// one test of bits they already hold), and the context hands them to the stores outside the
/// lock, on its queue, at the end of the operation that registered them (a fetch, a save,
/// `object(with:)`, `existingObject(with:)`, `obtainPermanentIDs(for:)`, a reset, each
/// `perform` block; never inside a store request) or, for objects that went in between, at the
/// next such operation. A context that goes inside a store request (its last reference dropped
/// there) hands its noted IDs on (``handOn(_:)``): the next delivery of any context outside a
/// request (the end of the operation whose request it was) delivers them with its own.
/// Registrations go before unregistrations, so a store's count never drops below the objects
/// in use.
internal struct StoreRegistrations {
    private(set) var registered: [NSManagedObjectID] = []
    private(set) var unregistered: [NSManagedObjectID] = []
    /// Whether the registry ever held a key of a store you write (a reset of a context that
    /// never did looks at none of its keys).
    private(set) var everNoted = false

    var isEmpty: Bool { registered.isEmpty && unregistered.isEmpty }

    mutating func noteRegistered(_ object: Unmanaged<NSManagedObject>, key value: Int64, owner: Int64) {
        everNoted = true
        if let id = Self.id(of: object, value: value, owner: owner) { registered.append(id) }
    }

    mutating func noteUnregistered(_ object: Unmanaged<NSManagedObject>, key value: Int64, owner: Int64) {
        if let id = Self.id(of: object, value: value, owner: owner) { unregistered.append(id) }
    }

    /// The noted IDs, which are forgotten here.
    mutating func take() -> StoreRegistrations {
        let taken = self
        registered = []
        unregistered = []
        return taken
    }

    /// The IDs of contexts that went inside a store request, where the stores can't be called
    /// (the request's store is in the middle of it, and another store's request lock may be
    /// held by a thread that waits for this one's); ``hasHandedOn`` tells, with no lock, that
    /// there are some.
    private static let handedOn = Locked(StoreRegistrations())
    private static let hasHandedOn = Atomic<Bool>(false)

    /// Keeps `registrations`, of a context that goes inside a store request, for the next
    /// delivery outside one (``takeHandedOn(into:)``).
    static func handOn(_ registrations: StoreRegistrations) {
        handedOn.withLock { kept in
            kept.registered += registrations.registered
            kept.unregistered += registrations.unregistered
            hasHandedOn.store(true, ordering: .relaxed)
        }
    }

    /// Adds the IDs handed on by contexts that went (``handOn(_:)``) to these, and forgets them there.
    mutating func takeHandedOn() {
        guard Self.hasHandedOn.load(ordering: .relaxed) else { return }
        let kept = Self.handedOn.withLock { kept in
            Self.hasHandedOn.store(false, ordering: .relaxed)
            return kept.take()
        }
        registered += kept.registered
        unregistered += kept.unregistered
    }

    /// The permanent ID of `object` under the registry key (`value`, `owner`): its own, or one
    /// made from its store and key. Reads only stored properties (the object may be in its
    /// `deinit`) and takes no lock (the registry's is held).
    private static func id(of object: Unmanaged<NSManagedObject>, value: Int64, owner: Int64) -> NSManagedObjectID? {
        object._withUnsafeGuaranteedRef { object in
            if let id = object._objectID, id.key.value == value, id.key.packedOwner == owner { return id }
            guard let store = object._idStore else { return nil }
            return NSManagedObjectID(entity: object.entity, store: store, key: IDKey(store: store.tag, root: object.layout.rootNumber, value: value))
        }
    }

    /// Calls the stores: each store once with its registered IDs, then once with its
    /// unregistered ones, under its request lock (one request at a time, as every call into it).
    func deliver() {
        for (store, ids) in Self.byStore(registered) {
            store.requestLock.lock()
            defer { store.requestLock.unlock() }
            store.managedObjectContextDidRegisterObjects(with: ids)
        }
        for (store, ids) in Self.byStore(unregistered) {
            store.requestLock.lock()
            defer { store.requestLock.unlock() }
            store.managedObjectContextDidUnregisterObjects(with: ids)
        }
    }

    /// `ids` grouped by store, stores in the order they first appear.
    private static func byStore(_ ids: [NSManagedObjectID]) -> [(NSIncrementalStore, [NSManagedObjectID])] {
        var groups: [(NSIncrementalStore, [NSManagedObjectID])] = []
        var positions: [ObjectIdentifier: Int] = [:]
        for id in ids {
            guard let store = id.persistentStore as? NSIncrementalStore else { continue }
            if let position = positions[ObjectIdentifier(store)] {
                groups[position].1.append(id)
            } else {
                positions[ObjectIdentifier(store)] = groups.count
                groups.append((store, [id]))
            }
        }
        return groups
    }
}

extension NSManagedObjectContext {
    /// Tells the stores you write which of their objects this context registered and let go of
    /// since it last did (``StoreRegistrations``). Called on the context's queue, holding no lock;
    /// one atomic load in a process that never opened such a store.
    @inline(__always)
    internal func deliverStoreRegistrations() {
        guard RequestingContext.inUse.load(ordering: .relaxed) else { return }
        deliverPendingStoreRegistrations(contextGoes: false)
    }

    /// ``deliverStoreRegistrations()`` from the context's `deinit`: inside a store request, the
    /// IDs are handed on (``StoreRegistrations/handOn(_:)``) rather than kept for a later
    /// operation the context will never have.
    internal func deliverStoreRegistrationsAsContextGoes() {
        guard RequestingContext.inUse.load(ordering: .relaxed) else { return }
        deliverPendingStoreRegistrations(contextGoes: true)
    }

    /// Whether the context's registry ever held an object of a store you write (for tests).
    internal var hasNotedStoreRegistrations: Bool {
        var noted = false
        withRegistryLock { noted = $0.storeRegistrations.everNoted }
        return noted
    }

    @inline(never)
    private func deliverPendingStoreRegistrations(contextGoes: Bool) {
        // Not inside a store request (a store's `execute` calling `object(with:)`): the store
        // hears of the objects once its request has returned, at the end of the operation.
        let inRequest = RequestingContext.current != nil
        guard !inRequest || contextGoes else { return }
        var pending = StoreRegistrations()
        withRegistryLock { registry in
            if !registry.storeRegistrations.isEmpty { pending = registry.storeRegistrations.take() }
        }
        if inRequest {
            if !pending.isEmpty { StoreRegistrations.handOn(pending) }
            return
        }
        pending.takeHandedOn()
        if !pending.isEmpty { pending.deliver() }
    }
}
