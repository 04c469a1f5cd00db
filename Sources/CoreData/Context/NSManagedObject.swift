import Foundation
import Observation
import Synchronization

/// An object of an entity, living in a managed object context.
///
/// Read and write its properties with key-value coding, or declare a typed subclass whose
/// properties are marked ``Managed()`` (Linux's spelling of `@NSManaged`):
///
/// ```swift
/// final class Car: NSManagedObject {
///     @Managed var name: String?
/// }
/// let car = Car(context: context)
/// car.name = "Model T"
/// car.setValue("Model A", forKey: "name")
/// try context.save()
/// ```
///
/// Objects are not `Sendable`: use them on their context's queue only, and pass
/// ``objectID`` between queues.
///
/// A subclass that conforms to Swift's `Observable` works with `withObservationTracking` (beyond
/// Apple's framework, as SwiftData's `@Model`): reads through `@Managed` getters and
/// `value(forKey:)` are tracked, and `onChange` runs once the property changes, whatever changed
/// it (a setter, a merge, a refresh, a rollback, an undo), after the change, on the context's queue:
///
/// ```swift
/// final class Car: NSManagedObject, Observable {
///     @Managed var name: String?
/// }
/// withObservationTracking { _ = car.name } onChange: { print("renamed") }
/// car.name = "Model A" // prints "renamed"
/// ```
///
/// An object gets a registrar the first time a tracking reads it; a class that is not
/// `Observable` pays one check per read (`NSManagedObject+Observation.swift`, `docs/PORTING.md`).
///
/// Subclasses that override ``init(entity:insertInto:)`` must mark it `required` (Linux
/// difference: the framework instantiates classes through that initializer, which needs
/// `required` without the Objective-C runtime).
open class NSManagedObject: NSObject, NSFetchRequestResult {
    /// The entity the object belongs to.
    public let entity: NSEntityDescription
    @usableFromInline internal let layout: EntityLayout
    /// The object's ID: temporary until the object is saved, then permanent.
    open internal(set) var objectID: NSManagedObjectID {
        get {
            if let id = _objectID {
                // Inserted in a child context and saved into the parent: once the chain's root
                // has saved it, the object answers with its permanent ID.
                if _mayBeForwarded, let context = _context, let permanent = context.forwardedID(for: id) {
                    // The object moves to its new ID on its context's queue only; a read from
                    // elsewhere (allowed for IDs) gets the permanent ID without changing anything.
                    guard context.isOnQueue else { return permanent }
                    _mayBeForwarded = false
                    context.reregister(self, as: permanent)
                    return permanent
                }
                return id
            }
            // An object of a context: its ID is made under the registry's lock, under which a
            // save gives a new object its permanent key, so that a read on another thread
            // (allowed for IDs) and one on the context's queue, or a save, make one ID between
            // them. A new object's temporary ID is registered there
            // (`NSManagedObjectContext.register(_:key:)`).
            if let context = _contextReference {
                return context._withUnsafeGuaranteedRef { $0.makeID(of: self) }
            }
            return makeIDWithoutContext()
        }
        set { _objectID = newValue; _idStore = nil }
    }
    /// The ID, once made. A fetched object starts with only its store and primary key
    /// (``setPermanentKey(_:store:)``), a new one with only its temporary serial number
    /// (``temporarySerial``): most objects never have their ID asked for (a saved one gets its
    /// permanent key the same way).
    ///
    /// `objectID` may be read on any thread, so the reference is kept in an atomic word (an
    /// owned reference, or 0): a read on another thread while the context's queue gives the
    /// object its ID, or a permanent one, is not a data race. An ID the object had is never
    /// released before the object (``Extras/retiredIDs``), so a reader that loaded it just
    /// before it was replaced can still retain it.
    ///
    /// Set only on the context's queue, or under its registry's lock (``makeID(of:)``, and
    /// every change on the queue to an object others may read: ``reregister(_:as:)``), or
    /// before the object is shared (a new or fetched object): writes never meet.
    internal var _objectID: NSManagedObjectID? {
        @inline(__always) get {
            let bits = _objectIDBits.load(ordering: .acquiring)
            guard bits != 0 else { return nil }
            return Unmanaged<NSManagedObjectID>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
        }
        set {
            if newValue == nil && _objectIDBits.load(ordering: .relaxed) == 0 { return }
            // An exchange, not a store: a reader of an object without a context may publish an
            // ID (`makeIDWithoutContext()`) at the same moment; whatever was there is retired.
            let old = _objectIDBits.exchange(newValue.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0,
                                             ordering: .acquiringAndReleasing)
            if old != 0 {
                let retired = Unmanaged<NSManagedObjectID>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).takeRetainedValue()
                extras.retiredIDs.append(retired)
            }
        }
    }
    private let _objectIDBits = Atomic<UInt>(0)
    /// Whether the object has its ID (``_objectID`` non-`nil`), read without a retain and release.
    internal var _hasObjectID: Bool {
        @inline(__always) get { _objectIDBits.load(ordering: .acquiring) != 0 }
    }
    @exclusivity(unchecked) internal var _idStore: NSPersistentStore?
    /// With `_idStore`: the primary key. Without `_idStore` or `_objectID`: the temporary ID's
    /// serial number, or 0 before one is drawn.
    @exclusivity(unchecked) internal var _idPrimaryKey: Int64 = 0

    /// Makes and keeps the object's ID, which it has not got yet: from its permanent key, or its
    /// temporary ID. (For an object of a context, under the registry's lock: `makeID(of:)`.)
    ///
    /// With `takingStore`, the object's reference to its store moves into the ID (no retain and
    /// release): only on the context's queue, whose own reads of `_idStore` take no lock.
    @inline(__always)
    internal func makeOwnID(takingStore: Bool) -> NSManagedObjectID {
        let id = newID(takingStore: takingStore, serial: temporarySerial)
        setFirstObjectID(id)
        return id
    }

    /// A new ID for the object, not kept yet: from its permanent key, or else a temporary ID
    /// numbered `serial`.
    @inline(__always)
    private func newID(takingStore: Bool, serial: @autoclosure () -> Int64) -> NSManagedObjectID {
        if _idStore != nil {
            let store = takingStore ? _idStore.take()! : _idStore.unsafelyUnwrapped
            let key = IDKey(store: store.tag, root: layout.rootNumber, value: _idPrimaryKey)
            return NSManagedObjectID(entity: entity, store: consume store, key: key)
        }
        return NSManagedObjectID(temporaryFor: entity, serial: serial())
    }

    /// Sets ``_objectID`` of an object that has none (nothing to retire). Only under the
    /// registry's lock or on the context's queue (writes never meet there).
    @inline(__always)
    private func setFirstObjectID(_ id: NSManagedObjectID) {
        _objectIDBits.store(UInt(bitPattern: Unmanaged.passRetained(id).toOpaque()), ordering: .releasing)
    }

    /// The ID of an object without a context, made on first read. There is no lock to take, and
    /// two threads may read it at once: each makes an ID and publishes it only if the object
    /// still has none (a compare-and-exchange); the one that loses takes the winner's. The
    /// temporary serial number is not written back: the ID the object keeps carries it.
    private func makeIDWithoutContext() -> NSManagedObjectID {
        let made = newID(takingStore: false, serial: _idPrimaryKey != 0 ? _idPrimaryKey : IDKey.nextTemporary())
        let bits = UInt(bitPattern: Unmanaged.passRetained(made).toOpaque())
        let (exchanged, current) = _objectIDBits.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing)
        if exchanged { return made }
        Unmanaged<NSManagedObjectID>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release()
        return Unmanaged<NSManagedObjectID>.fromOpaque(UnsafeRawPointer(bitPattern: current)!).takeUnretainedValue()
    }

    /// The serial number of the object's temporary ID (drawn on first need: insertion, or the ID
    /// asked for), when it has neither an ID nor a permanent key.
    private var temporarySerial: Int64 {
        if _idPrimaryKey == 0 { _idPrimaryKey = IDKey.nextTemporary() }
        return _idPrimaryKey
    }

    /// Gives a fetched object its permanent ID without allocating it yet.
    internal func setPermanentKey(_ primaryKey: Int64, store: NSPersistentStore) {
        // Tested first: a fetched or newly saved object has no ID yet, and assigning over `nil`
        // still calls `swift_release` (once per object).
        if _hasObjectID { _objectID = nil }
        _idStore = store
        _idPrimaryKey = primaryKey
    }

    /// The key of the object's ID, without making the ID.
    internal var idKey: IDKey {
        if let id = _objectID { return id.key }
        if let store = _idStore { return IDKey(store: store.tag, root: layout.rootNumber, value: _idPrimaryKey) }
        let serial = temporarySerial // first: `layout` is then not held (retained) across the call
        return IDKey(store: IDKey.temporaryStore, root: layout.rootNumber, value: serial)
    }

    /// The store of the object's permanent ID, if it has one (without making the ID).
    internal var permanentIDStore: NSPersistentStore? {
        if let id = _objectID { return id.persistentStore }
        return _idStore
    }
    /// The context the object is registered in, held unretained: the context outlives its
    /// registered objects (it detaches them, setting this to `nil`, when it goes).
    internal var _context: NSManagedObjectContext? {
        get { _contextReference?.takeUnretainedValue() }
        set { _contextReference = newValue.map(Unmanaged.passUnretained) }
    }
    /// ``_context``'s storage, unretained. An atomic word: `objectID`, which may be read on any
    /// thread, reads it to find the registry's lock while the context's queue may be letting
    /// the object go. The context itself is not retained by that read: an app that lets the last
    /// reference to a context go on one thread while reading one of its objects' `objectID` on
    /// another has a race (the context's `deinit` detaches its objects, but the reader may
    /// already hold the address).
    private var _contextReference: Unmanaged<NSManagedObjectContext>? {
        @inline(__always) get {
            let bits = _contextBits.load(ordering: .acquiring) & ~1 // (the low bit: claimed by `deinit`)
            return bits == 0 ? nil : Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
        }
        @inline(__always) set {
            _contextBits.store(newValue.map { UInt(bitPattern: $0.toOpaque()) } ?? 0, ordering: .releasing)
        }
    }
    /// ``_contextReference``'s word: as an `Unmanaged`, `deinit` reads it without a retain and
    /// release (reading an `unowned(unsafe)` property makes a strong copy).
    private let _contextBits = Atomic<UInt>(0)

    /// Attribute values (and unresolved to-one IDs) by property index. Read by the inlined
    /// `@Managed` getters (`Managed.swift`) across modules.
    @exclusivity(unchecked) @usableFromInline final internal var _values: PropertyValues
    /// Relationships that have been materialized, by property index.
    @exclusivity(unchecked) internal var _relations: [Int: RelationshipValue] = .init() // not `[:]`: a call per object
    /// The values as last fetched or saved (`nil` for a new object), without their entity
    /// (the object's): see ``_snapshot``.
    @exclusivity(unchecked) internal var _snapshotValues: PropertyValues?
    /// `Z_OPT` of the row as last fetched or saved.
    @exclusivity(unchecked) internal var _snapshotVersion: Int64 = 0
    /// The row as last fetched or saved (`nil` for a new object). Kept as its values and
    /// version (16 bytes, not a `RowSnapshot`'s 24): objects are smaller.
    internal var _snapshot: RowSnapshot? {
        get { _snapshotValues.map { RowSnapshot(entity: entity, values: $0, version: _snapshotVersion) } }
        set {
            _snapshotValues = newValue?.values
            _snapshotVersion = newValue?.version ?? 0
        }
    }
    /// Indexes of properties changed since the last save: those below 64 in
    /// ``_changedBits``, any others (an entity of more than 64 properties) in ``_extras``.
    /// Changed in place by ``insertChanged(_:)``, ``removeChanged(_:)`` and ``clearChanged()``.
    internal var _changed: PropertyMask {
        @inline(__always) get { PropertyMask(bits: _changedBits, overflow: _extras?.changedOverflow) }
    }
    /// The indexes below 64 of ``_changed`` (8 bytes, not a `PropertyMask`'s 16: see ``_flags``).
    @exclusivity(unchecked) internal var _changedBits: UInt64 = 0
    /// Empties ``_changed``.
    @inline(__always)
    internal func clearChanged() {
        _changedBits = 0
        if _extras != nil { _extras!.changedOverflow = nil }
    }
    /// Adds `index` to ``_changed``, in place (the set of indexes from 64 on is not copied).
    @inline(__always)
    internal func insertChanged(_ index: Int) {
        if index < 64 { _changedBits |= 1 << UInt64(index); return }
        insertChangedOverflow(index)
    }
    /// ``insertChanged(_:)`` of an index from 64 on (rare: not inlined into the setters).
    @inline(never)
    private func insertChangedOverflow(_ index: Int) {
        let extras = self.extras
        if extras.changedOverflow == nil { extras.changedOverflow = [index] } else { extras.changedOverflow!.insert(index) }
    }
    /// Removes `index` from ``_changed``, in place.
    internal func removeChanged(_ index: Int) {
        if index < 64 { _changedBits &= ~(1 << UInt64(index)); return }
        _extras?.changedOverflow?.remove(index)
    }
    @exclusivity(unchecked) @usableFromInline final internal var _isFault = false
    /// Whether accessors check the caller's queue (the concurrency checker is on), or report
    /// their key (a key-path probe, `TypedKeyPaths.swift`).
    @exclusivity(unchecked) @usableFromInline final internal var _checksQueue = ConcurrencyDebug.isEnabled
    /// The object's other Boolean states, one bit each (``Flag``). With ``_changedBits``, they
    /// make an object 120 bytes rather than 136: within glibc's fast bins (chunks of at most
    /// 128 bytes), which allocate and free with much less work than 144-byte chunks.
    @exclusivity(unchecked) internal var _flags: UInt8 = Flag.hasData
    /// The bits of ``_flags``.
    internal enum Flag {
        static let hasData: UInt8 = 1
        static let isInserted: UInt8 = 2
        static let isDeleted: UInt8 = 4
        static let isUpdated: UInt8 = 8
        static let hasMistypedValue: UInt8 = 16
        // (32 is free.)
        /// A typed `setValue(_:forKey:)` overload is calling the `Any?` method (and through it an
        /// override): see `NSManagedObject+TypedSetters.swift`.
        static let inTypedDispatch: UInt8 = 64
        /// The object is a plain `NSManagedObject`, not an instance of a subclass (set once, by
        /// the initializer): the typed `setValue(_:forKey:)` overloads then set values in place,
        /// without asking for the class's metadata on every call, and a save whose changed
        /// objects are all plain does not call their (empty) `willSave` and `didSave`.
        /// (Seven of the eight bits of ``_flags`` are taken: another flag after the next needs a
        /// wider field, which takes the object out of glibc's fast bins unless another field shrinks.)
        static let isPlain: UInt8 = 128
    }
    /// Whether the object is a plain `NSManagedObject` (``Flag/isPlain``).
    final internal var _isPlain: Bool { @inline(__always) get { flag(Flag.isPlain) } }
    /// Whether a typed `setValue(_:forKey:)` overload's call of the `Any?` method is under way.
    final internal var _inTypedDispatch: Bool { @inline(__always) get { flag(Flag.inTypedDispatch) } @inline(__always) set { setFlag(Flag.inTypedDispatch, newValue) } }
    @inline(__always)
    private func flag(_ bit: UInt8) -> Bool { _flags & bit != 0 }
    @inline(__always)
    private func setFlag(_ bit: UInt8, _ value: Bool) { _flags = value ? _flags | bit : _flags & ~bit }
    /// Whether the object's values are loaded (not a fault without data).
    final internal var _hasData: Bool { @inline(__always) get { flag(Flag.hasData) } @inline(__always) set { setFlag(Flag.hasData, newValue) } }
    final internal var _isInserted: Bool { @inline(__always) get { flag(Flag.isInserted) } @inline(__always) set { setFlag(Flag.isInserted, newValue) } }
    final internal var _isDeleted: Bool { @inline(__always) get { flag(Flag.isDeleted) } @inline(__always) set { setFlag(Flag.isDeleted, newValue) } }
    final internal var _isUpdated: Bool { @inline(__always) get { flag(Flag.isUpdated) } @inline(__always) set { setFlag(Flag.isUpdated, newValue) } }
    /// Whether `setValue(_:forKey:)` stored a value of the wrong type for an attribute since the
    /// last save: only then does validation check every attribute's type.
    final internal var _hasMistypedValue: Bool { @inline(__always) get { flag(Flag.hasMistypedValue) } @inline(__always) set { setFlag(Flag.hasMistypedValue, newValue) } }
    /// Known here by a temporary ID the chain's root may have made permanent since: inserted
    /// here and saved into the parent context, or read from the parent while new there.
    internal var _mayBeForwarded: Bool {
        @inline(__always) get { _mayBeForwardedFlag.load(ordering: .relaxed) }
        @inline(__always) set { _mayBeForwardedFlag.store(newValue, ordering: .relaxed) }
    }
    /// ``_mayBeForwarded``'s storage: atomic, as the `objectID` getter reads it on any thread.
    private let _mayBeForwardedFlag = Atomic<Bool>(false)
    /// The object's slot in its context's inserted, updated or deleted set (`Int32`, beside the
    /// flags: objects are 8 bytes smaller).
    @exclusivity(unchecked) internal var _changeSlot: Int32 = -1
    /// State few objects have, out of line: every object is 16 bytes smaller for it (a fetch of
    /// 200,000 objects allocates 3 MB less).
    internal final class Extras {
        var fetchBatch: FetchBatch?
        var fetchedValues: [Int: Any]?
        /// IDs the object had before its current one (a temporary ID, once it got a permanent
        /// one): kept until the object goes, for a reader on another thread (``_objectID``).
        var retiredIDs: [NSManagedObjectID] = []
        /// The indexes from 64 on of ``NSManagedObject/_changed``.
        var changedOverflow: Set<Int>?
        /// The object's own registrar, made at its first observed read
        /// (`NSManagedObject+Observation.swift`). In a class of our own: `ObservationRegistrar` is
        /// a resilient type of another module, so an optional of it is copied, tested and
        /// destroyed through value witnesses, where a reference is one compare with nil.
        var observation: ObservedObjectRegistrar?
        /// The store a new object is to be saved in (`NSManagedObjectContext.assign(_:to:)`).
        var assignedStore: NSPersistentStore?
    }
    @exclusivity(unchecked) internal var _extras: Extras?
    /// ``_extras``, made if the object has none yet.
    internal var extras: Extras {
        if _extras == nil { _extras = Extras() }
        return _extras!
    }
    /// The batch of a batched fetch (`fetchBatchSize`) this data-less fault belongs to: firing
    /// it loads the whole batch with one query (`NSManagedObjectContext+Batching.swift`).
    internal var _fetchBatch: FetchBatch? {
        get { _extras?.fetchBatch }
        set {
            if newValue == nil && _extras == nil { return }
            extras.fetchBatch = newValue
        }
    }
    /// The values of the fetched properties read since the object was last refreshed, by
    /// `fetchedIndex` (`NSManagedObject+FetchedProperties.swift`).
    internal var _fetchedValues: [Int: Any]? {
        get { _extras?.fetchedValues }
        set {
            if newValue == nil && _extras == nil { return }
            extras.fetchedValues = newValue
        }
    }

    /// Creates an object of `entity` and inserts it into `context` (if any).
    public required init(entity: NSEntityDescription, insertInto context: NSManagedObjectContext?) {
        // `context` is taken owned, Swift's default for an initializer, although the object
        // keeps it unretained. If it were declared `borrowing` (a retain and release fewer per
        // new object), Swift 6.3 would still accept an override written with the default
        // convention, as apps write it, but that override would release the context once too
        // often, and the process would crash (`OverriddenInitializerTests`).
        // The layout is read without a retain and release: the entity keeps it (and the object
        // keeps the entity). Only the object's own `layout` reference retains it.
        let layout = entity.layoutReference
        self.layout = layout.takeUnretainedValue()
        // A new object's values are set at once: a buffer of its own now, rather than a copy of
        // the shared defaults at the first write. (Assigned once: no retain and release of the
        // shared defaults per object.)
        self._values = layout._withUnsafeGuaranteedRef { context == nil ? $0.defaultValues : $0.newValues() }
        // The caller's reference moves into the object: no retain here and release at the end.
        self.entity = consume entity
        // The class is looked at before `super.init()`: a call after it (the registry's) makes
        // Swift retain and release `self` around the rest of the initializer, context or not.
        let objectClass = Self.self
        if objectClass == NSManagedObject.self { _flags = Flag.hasData | Flag.isPlain }
        if !layout._withUnsafeGuaranteedRef({ $0.isResolvedClass(objectClass) }) {
            ManagedObjectClassRegistry.register(objectClass)
            layout._withUnsafeGuaranteedRef { $0.noteInstanceClass(objectClass) }
        }
        super.init()
        if let context { context.insert(self) }
    }

    /// Creates an object of the entity whose class is this class and inserts it into `context`.
    ///
    /// The context's model must have exactly one entity whose `managedObjectClassName` names this
    /// class; otherwise this is a programmer error and stops the process, as on Apple platforms.
    public convenience init(context: NSManagedObjectContext) {
        ManagedObjectClassRegistry.register(Self.self)
        guard let entity = context.model.flatMap({ Self.entity(in: $0) }) else {
            preconditionFailure("No entity in the context's model has the class '\(String(reflecting: Self.self))'")
        }
        self.init(entity: entity, insertInto: context)
    }

    deinit {
        defer { releaseObjectID() }
        // The context, claimed once and kept without a retain: a context that goes (or meets
        // this object in its registry) from now on waits for this `deinit` to leave its registry.
        guard let context = claimContextAtDeinit() else { return }
        let key: IDKey?
        if let id = _objectID {
            key = id.key
        } else if let store = _idStore {
            key = IDKey(store: store.tag, root: layout.rootNumber, value: _idPrimaryKey)
        } else if _idPrimaryKey != 0 {
            key = IDKey(store: IDKey.temporaryStore, root: layout.rootNumber, value: _idPrimaryKey)
        } else {
            key = nil
        }
        let address = Unmanaged.passUnretained(self).toOpaque()
        context._withUnsafeGuaranteedRef { $0.unregisterOnDeinit(key, address: address) }
    }

    /// At `deinit`: marks the context word claimed (the context's address with its low bit set)
    /// and returns the context, or `nil` if the object has none. A context that meets the object
    /// in its registry while it is being deallocated (its strong count at zero) clears the word
    /// first if it can (``detachDeallocating(from:)``): this `deinit` then never reaches it.
    private func claimContextAtDeinit() -> Unmanaged<NSManagedObjectContext>? {
        var bits = _contextBits.load(ordering: .acquiring)
        while bits != 0 {
            let (exchanged, original) = _contextBits.compareExchange(expected: bits, desired: bits | 1, ordering: .acquiringAndReleasing)
            if exchanged { return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: bits)!) }
            bits = original
        }
        return nil
    }

    /// What a context did with an object of its registry that is being deallocated.
    internal enum Deallocating {
        /// Its `deinit` had not claimed the context yet: the word is cleared, and the `deinit`
        /// will not reach the context (which removes the object's entry itself).
        case detached
        /// Its `deinit` claimed this context: it will remove its entry, and the context waits
        /// for that if it goes first.
        case willUnregister
        /// Its `deinit` will not reach this context (it is not the object's context).
        case notOfThisContext
    }

    /// For a context (its address: `context`) that meets this object in its registry while it is
    /// being deallocated, under the registry's lock (the object's memory stays until its
    /// `deinit`, which needs that lock if it reaches the context, is over).
    internal func detachDeallocating(from context: UInt) -> Deallocating {
        let (exchanged, original) = _contextBits.compareExchange(expected: context, desired: 0, ordering: .acquiringAndReleasing)
        if exchanged { return .detached }
        return original == context | 1 ? .willUnregister : .notOfThisContext
    }

    /// Gives back the reference ``_objectID``'s word owns (at `deinit`).
    @inline(__always)
    private func releaseObjectID() {
        let bits = _objectIDBits.load(ordering: .relaxed)
        if bits != 0 { Unmanaged<NSManagedObjectID>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    }

    /// The entity described by this class in the models in use, found by `managedObjectClassName`.
    ///
    /// Asking a class that no loaded model maps to an entity is a programmer error and stops the process.
    open class func entity() -> NSEntityDescription {
        ManagedObjectClassRegistry.register(self)
        for model in LoadedModels.all {
            if let entity = entity(in: model) { return entity }
        }
        preconditionFailure("No entity in a loaded model has the class '\(String(reflecting: self))'")
    }

    internal class func entity(in model: NSManagedObjectModel) -> NSEntityDescription? {
        let qualified = String(reflecting: self)
        let bare = String(qualified.split(separator: ".").last ?? "")
        let matches = model.entities.filter { entity in
            guard let name = entity.managedObjectClassName.map(ManagedObjectClassRegistry.lookupName) else { return false }
            return name == qualified || name == bare
        }
        return matches.count == 1 ? matches[0] : matches.first { $0.managedObjectClassName.map(ManagedObjectClassRegistry.lookupName) == qualified }
    }

    // MARK: State

    /// The context the object lives in; `nil` once it is deleted and saved, or never inserted.
    open var managedObjectContext: NSManagedObjectContext? { _context }
    /// Whether the object has been inserted and not yet saved.
    open var isInserted: Bool { _isInserted }
    /// Whether the object has unsaved changes.
    open var isUpdated: Bool { _isUpdated }
    /// Whether the object will be deleted at the next save.
    open var isDeleted: Bool { _isDeleted }
    /// Whether the object's values have not been loaded yet.
    open var isFault: Bool { _isFault }
    /// Whether the object has been inserted, updated or deleted.
    open var hasChanges: Bool { _isInserted || _isUpdated || _isDeleted }
    /// Whether any persistent (non-transient) value differs from its saved value.
    open var hasPersistentChangedValues: Bool {
        _changed.contains { !layout.properties[$0].isTransient }
    }
    /// The fault state Core Data would report (0: not a fault).
    open var faultingState: Int { _isFault ? 1 : 0 }

    // MARK: Life-cycle hooks (override in subclasses)

    /// Called once, when the object is first inserted into a context.
    open func awakeFromInsert() {}
    /// Called when a fault is fired and the object's values arrive from the store.
    open func awakeFromFetch() {}
    /// Called after the object's values were put back from a snapshot: by `rollback()`
    /// (``NSSnapshotEventType/rollback``), a refresh that kept unsaved changes on top of the
    /// store's values (``NSSnapshotEventType/refresh``), an undo or redo
    /// (``NSSnapshotEventType/undoUpdate``, ``NSSnapshotEventType/undoDeletion``, and
    /// ``NSSnapshotEventType/undoInsertion`` just before the object leaves its context), and a
    /// merge policy resolving a conflict at save (``NSSnapshotEventType/mergePolicy``). Use it to
    /// recompute derived or transient values; set values with `setPrimitiveValue(_:forKey:)`.
    ///
    /// ```swift
    /// override func awake(fromSnapshotEvents flags: NSSnapshotEventType) {
    ///     super.awake(fromSnapshotEvents: flags)
    ///     cachedTotal = nil
    /// }
    /// ```
    open func awake(fromSnapshotEvents flags: NSSnapshotEventType) {}
    /// Called before the object is saved.
    open func willSave() {}
    /// Called after the object has been saved.
    open func didSave() {}
    /// Called when the object is about to be deleted (before delete rules are applied).
    open func prepareForDeletion() {}
    /// Called before the object is turned into a fault.
    open func willTurnIntoFault() {}
    /// Called after the object was turned into a fault.
    open func didTurnIntoFault() {}
    /// Called before a value is read; fires the fault.
    open func willAccessValue(forKey key: String?) {
        if _isFault { fireFault(triggeredBy: key.flatMap { layout.nameTable.index(of: $0) }) }
    }
    /// Called after a value is read.
    open func didAccessValue(forKey key: String?) {}
    /// Called before a value changes.
    open func willChangeValue(forKey key: String) {}
    /// Called after a value changed.
    open func didChangeValue(forKey key: String) {}
    /// Called before a to-many relationship changes by `mutation` with `objects`, as a
    /// hand-written to-many accessor tells it; calls ``willChangeValue(forKey:)``.
    ///
    /// ```swift
    /// willChangeValue(forKey: "tags", withSetMutation: .union, using: [tag])
    /// mutableSetValue(forKey: "tags").add(tag)
    /// didChangeValue(forKey: "tags", withSetMutation: .union, using: [tag])
    /// ```
    open func willChangeValue(forKey inKey: String, withSetMutation inMutationKind: NSKeyValueSetMutationKind, using inObjects: Set<AnyHashable>) {
        willChangeValue(forKey: inKey)
    }
    /// Called after a to-many relationship changed by `mutation` with `objects`; calls
    /// ``didChangeValue(forKey:)``.
    open func didChangeValue(forKey inKey: String, withSetMutation inMutationKind: NSKeyValueSetMutationKind, using inObjects: Set<AnyHashable>) {
        didChangeValue(forKey: inKey)
    }

    // MARK: Validation (override in subclasses; call super)

    /// Checks a value for a property against the model's rules (optionality, type, bounds,
    /// lengths, pattern, counts, validation predicates). Override to add rules; call `super`.
    ///
    /// Linux difference: the value is an `inout Any?` (Apple's takes an
    /// `AutoreleasingUnsafeMutablePointer`, which does not exist without Objective-C).
    open func validateValue(_ value: inout Any?, forKey key: String) throws {
        try validateValueAgainstModel(value, forKey: key)
    }
    /// Validates the object before it is inserted; override to add rules and call `super`.
    open func validateForInsert() throws { try validateAllProperties() }
    /// Validates the object before its changes are saved; override to add rules and call `super`.
    open func validateForUpdate() throws { try validateAllProperties() }
    /// Validates the object before it is deleted: a `deny` relationship that still holds objects
    /// gives `NSValidationRelationshipDeniedDeleteError` (1600).
    open func validateForDelete() throws { try validateDeleteRules() }

    // MARK: Faulting

    @inlinable @inline(__always)
    final internal func fireFaultIfNeeded() {
        if _isFault { fireFault() }
    }

    /// ``fireFaultIfNeeded()`` for a use of the property at `index`, which the context's
    /// `shouldHandleInaccessibleFault(_:for:triggeredByProperty:)` is told of if the row is gone.
    @inlinable @inline(__always)
    final internal func fireFaultIfNeeded(triggeredBy index: Int) {
        if _isFault { fireFault(triggeredBy: index) }
    }

    /// Loads the fault's row (unless it came with the fault) and makes the object a loaded one.
    ///
    /// - The row is gone (deleted behind the context's back): as Apple's context does with
    ///   ``NSManagedObjectContext/shouldDeleteInaccessibleFaults`` (the default), the object
    ///   reads as deleted: its attributes nil or 0, its relationships nil or empty, `isDeleted`,
    ///   in the context's `deletedObjects`, exempt from validation; the next `save()` writes
    ///   nothing for it and takes it out of `deletedObjects` (it stays registered, deleted, as a
    ///   merged delete does), and `rollback()` or a refresh makes it a fault again. The context
    ///   is asked first (``NSManagedObjectContext/shouldHandleInaccessibleFault(_:for:triggeredByProperty:)``,
    ///   told of the property at `index` when a use of one fired the fault); if it answers
    ///   `false` — as it does by default with `shouldDeleteInaccessibleFaults` off — the process
    ///   stops (Apple raises "CoreData could not fulfill a fault"), a programmer's choice. It is
    ///   not asked while delete rules run: an object being deleted whose row is gone is deleted.
    /// - The store failed: the object stays a fault whose attributes read nil or 0, its context
    ///   records and logs the error and its next `save()` throws it; the next access tries again
    ///   (see `NSManagedObjectContext+UnfulfilledFaults.swift`).
    @usableFromInline
    final internal func fireFault(triggeredBy index: Int? = nil) {
        guard _isFault else { return }
        if !_hasData, let batch = _fetchBatch {
            _fetchBatch = nil
            _context?.loadBatch(batch)
        }
        if !_hasData {
            let snapshot: RowSnapshot?
            do {
                snapshot = try _context?.snapshotForFault(objectID)
            } catch {
                faultCouldNotBeFulfilled(error)
                return
            }
            guard let snapshot else { return becomeInaccessible(triggeredBy: index) }
            adoptLoadedRow(snapshot)
        }
        _isFault = false
        awakeFromFetch()
    }

    /// The store failed to read this fault's row: what the object has is nothing, so its
    /// attributes read nil or 0 (values it was given since stay); it stays a fault, which the
    /// next access fires again. The context records the error (``fireFault()``).
    @inline(never)
    private func faultCouldNotBeFulfilled(_ error: any Error) {
        if _values.count == 0 { _values = layout.nullValues() }
        _context?.recordUnfulfilledFault(error, of: self, relationship: nil)
    }

    /// The fault's row is gone: the object reads as deleted (``fireFault(triggeredBy:)``).
    @inline(never)
    private func becomeInaccessible(triggeredBy index: Int?) {
        let context = _context
        if let context, !context.isPropagatingDeletes, context.askingAboutInaccessibleFaults.insert(ObjectIdentifier(self)).inserted {
            let property = index.map { layout.properties[$0] }
            let handled = context.shouldHandleInaccessibleFault(self, for: objectID, triggeredByProperty: property)
            context.askingAboutInaccessibleFaults.remove(ObjectIdentifier(self))
            guard handled else { preconditionFailure("CoreData could not fulfill a fault for '\(objectID)'") }
            guard _isFault else { return } // the override read the object, which made it deleted already
        }
        _values = layout.nullValues()
        _hasData = true
        _isFault = false
        // Nothing to read for its relationships either: no store query for an object not there.
        for index in layout.relationshipIndexes {
            _relations[index] = layout.storageKinds[index] == .toOne ? .toOne(nil) : .toMany(ObjectList())
        }
        guard let context else { _isDeleted = true; return }
        // Changes made while an earlier load failed have no row to go to.
        clearChanged()
        if _isUpdated { context.updated.remove(self); _isUpdated = false }
        if !_isDeleted { _isDeleted = true; context.deleted.insert(self) }
        if context.hasUnfulfilledFaults { context.forgetUnfulfilledFault(of: self, relationship: nil) }
    }

    /// Whether the object is a fault whose row was gone when it fired (``fireFault()``):
    /// deleted, loaded, without a row.
    internal var _isInaccessible: Bool { _isDeleted && !_isFault && _snapshotValues == nil && !_isInserted }

    /// Turns the object back into a fault, discarding its values (and unsaved changes, if any).
    internal func turnIntoFault(keepingSnapshot snapshot: RowSnapshot?) {
        willTurnIntoFault()
        changingObservedValues {
            _relations.removeAll()
            clearChanged()
            _isUpdated = false
            load(snapshot)
            _isFault = true
        }
        didTurnIntoFault()
    }

    // MARK: Key-value coding

    internal func propertyIndex(forKey key: String) -> Int {
        guard let index = layout.nameTable.index(of: key) else {
            preconditionFailure("[<\(type(of: self)) \(entity.name ?? "")> valueForUndefinedKey:]: the entity \(entity.name ?? "") is not key value coding-compliant for the key \"\(key)\".")
        }
        return index
    }

    /// The value of a property: `NSNumber` for numbers and Booleans, `String`, `Date`, `Data`,
    /// `UUID`, `URL`, `NSDecimalNumber`, a managed object for a to-one relationship,
    /// `Set<NSManagedObject>` for a to-many one and `NSOrderedSet` for an ordered one; for a
    /// fetched property, the array its fetch request returns (`[NSManagedObject]`), fetched at the
    /// first read and cached until the object is refreshed (``NSFetchedPropertyDescription``).
    ///
    /// A key that is not a property of the entity is a programmer error and stops the process
    /// (Apple raises `NSUnknownKeyException`).
    open func value(forKey key: String) -> Any? {
        _checkQueue(key)
        willAccessValue(forKey: key)
        guard let index = layout.nameTable.index(of: key) else { return fetchedPropertyValue(forKey: key) }
        if layout.observesReads { _observeRead(at: index) }
        return primitiveValue(at: index)
    }

    /// The value at the end of a dotted key path through to-one relationships (`owner.name`).
    open func value(forKeyPath keyPath: String) -> Any? {
        guard let dot = keyPath.firstIndex(of: ".") else { return value(forKey: keyPath) }
        let head = String(keyPath[..<dot])
        let rest = String(keyPath[keyPath.index(after: dot)...])
        if let index = layout.nameTable.index(of: head), let composite = composite(at: index) {
            _checkQueue(head)
            willAccessValue(forKey: head)
            if layout.observesReads { _observeRead(at: index) }
            return compositeValue(composite, at: index, keyPath: keyPath)
        }
        switch value(forKey: head) {
        case let object as NSManagedObject: return object.value(forKeyPath: rest)
        case let set as Set<NSManagedObject>: return Set(set.compactMap { $0.value(forKeyPath: rest) as? AnyHashable })
        case let ordered as NSOrderedSet: return ordered.array.compactMap { ($0 as? NSManagedObject)?.value(forKeyPath: rest) }
        case let fetched as [NSManagedObject]: return fetched.compactMap { $0.value(forKeyPath: rest) }
        default: return nil
        }
    }

    /// Sets the value at the end of a dotted key path (`owner.name`): the path is followed
    /// through to-one relationships, and through a to-many relationship or fetched property into
    /// each of its objects, as key-value coding does; a `nil` on the way sets nothing, and so
    /// does a value on the way that is not a managed object (Linux: no key-value coding for it).
    ///
    /// ```swift
    /// car.setValue("Ada", forKeyPath: "owner.name")
    /// ```
    open func setValue(_ value: Any?, forKeyPath keyPath: String) {
        guard let dot = keyPath.firstIndex(of: ".") else { return setValue(value, forKey: keyPath) }
        let head = String(keyPath[..<dot])
        let rest = String(keyPath[keyPath.index(after: dot)...])
        if let index = layout.nameTable.index(of: head), let composite = composite(at: index) {
            // An element of a composite attribute (`address.city`), or a nested composite.
            _checkQueue(head)
            willChangeValue(forKey: head)
            _ = setCompositeValue(value, composite, at: index, keyPath: keyPath)
            didChangeValue(forKey: head)
            return
        }
        switch self.value(forKey: head) {
        case let object as NSManagedObject: object.setValue(value, forKeyPath: rest)
        case let set as Set<NSManagedObject>: for object in set { object.setValue(value, forKeyPath: rest) }
        case let ordered as NSOrderedSet: for case let object as NSManagedObject in ordered.array { object.setValue(value, forKeyPath: rest) }
        case let fetched as [NSManagedObject]: for object in fetched { object.setValue(value, forKeyPath: rest) }
        default: break
        }
    }

    /// Sets several properties from a dictionary, as key-value coding does: each value with
    /// ``setValue(_:forKey:)``, `NSNull` as `nil`. A key that is not a property of the entity
    /// stops the process, as ``setValue(_:forKey:)`` does (Apple raises `NSUnknownKeyException`).
    ///
    /// ```swift
    /// note.setValuesForKeys(["title": "Groceries", "body": NSNull()])
    /// ```
    open func setValuesForKeys(_ keyedValues: [String: Any]) {
        for (key, value) in keyedValues { setValue(value is NSNull ? nil : value, forKey: key) }
    }

    /// Sets a property's value, keeping the inverse relationship in step.
    ///
    /// A value of the wrong type is kept, and ``NSManagedObjectContext/save()`` throws a
    /// validation error naming the key (Apple raises an exception at once); nothing is written.
    /// A fetched property is read-only: its value stays as it is, and a `CoreData: error:` line on
    /// standard error says so. A relationship given an object of an entity other than its
    /// destination (or a sub-entity), or a value that is not a managed object (an object ID) or,
    /// for a to-many relationship, not a collection of them (a single object), stops the process
    /// with Apple's message ("Unacceptable type of value for to-one relationship"), as Apple
    /// raises `NSInvalidArgumentException`.
    open func setValue(_ value: Any?, forKey key: String) {
        _setValueAsBase(value, forKey: key)
    }

    /// What this class's `setValue(_:forKey:)` does, whatever a subclass overrides.
    @inline(__always)
    internal final func _setValueAsBase(_ value: Any?, forKey key: String) {
        _checkQueue(key)
        guard let index = layout.nameTable.index(of: key) else { return setFetchedPropertyValue(value, forKey: key) }
        willChangeValue(forKey: key)
        // `setStoreValue` inlined: not a fault, checked first. The value is read in place; an
        // integer goes straight into its 8-byte slot, without a `StoreValue`.
        // (The value stays borrowed, as the caller's: taken (`__owned`), it would leak through
        // an override written without the modifier, as Apple-platform code is, when called on
        // an `NSManagedObject` reference: Swift puts such an override in the method's slot with
        // no thunk.)
        if !_isFault, let int = StoreValue.fastInteger(borrowing: value, kind: layout.storageKinds[index]) {
            _values.setInt64(int, at: index)
            markChanged(index)
        } else if !_isFault, let stored = StoreValue.fastConvert(borrowing: value, kind: layout.storageKinds[index]) {
            _values[index] = consume stored
            markChanged(index)
        } else {
            setValue(value, at: index)
        }
        didChangeValue(forKey: key)
    }

    /// The value without firing change tracking hooks (faults still fire).
    open func primitiveValue(forKey key: String) -> Any? {
        _checkQueue(key)
        guard let index = layout.nameTable.index(of: key) else {
            fireFaultIfNeeded()
            return fetchedPropertyValue(forKey: key)
        }
        return primitiveValue(at: index)
    }

    /// Sets a value as `setValue(_:forKey:)` does, for use inside custom accessors.
    open func setPrimitiveValue(_ value: Any?, forKey key: String) {
        _checkQueue(key)
        guard let index = layout.nameTable.index(of: key) else { return setFetchedPropertyValue(value, forKey: key) }
        setValue(value, at: index)
    }

    /// A mutable set proxy for a to-many relationship; changes go through inverse maintenance.
    open func mutableSetValue(forKey key: String) -> NSMutableSet {
        _checkQueue(key)
        return ManagedMutableSet(object: self, index: propertyIndex(forKey: key))
    }

    /// A mutable ordered set proxy for an ordered to-many relationship.
    open func mutableOrderedSetValue(forKey key: String) -> NSMutableOrderedSet {
        _checkQueue(key)
        return ManagedMutableOrderedSet(object: self, index: propertyIndex(forKey: key))
    }

    /// Several values at once.
    open func dictionaryWithValues(forKeys keys: [String]) -> [String: Any] {
        var result: [String: Any] = [:]
        for key in keys { result[key] = value(forKey: key) ?? NSNull() }
        return result
    }

    internal func primitiveValue(at index: Int) -> Any? {
        fireFaultIfNeeded(triggeredBy: index)
        // By the property's storage kind: no cast of its description, and an integer is read
        // from its 8-byte slot straight into the `NSNumber` key-value coding hands out.
        switch layout.storageKinds[index] {
        case .integer16, .integer32, .integer64:
            if let value = _values.int64(at: index) { return NSNumber(value: value) }
        case .toOne:
            return toOneObject(at: index)
        case .toMany:
            return Set(toManyList(at: index).objects)
        case .orderedToMany:
            return NSOrderedSet(array: toManyList(at: index).objects)
        default:
            break
        }
        if let composite = composite(at: index) { return compositeValue(composite, at: index) }
        if layout.attributeTypes[index] == .transformableAttributeType, case .data(let data) = _values[index],
           let attribute = layout.properties[index] as? NSAttributeDescription {
            // Decoded once, on first access; the stored form stays in the snapshot.
            let decoded = TransformableCoding.decode(data, for: attribute)
            _values[index] = decoded.map { .object(ObjectBox($0)) } ?? .null
            return decoded
        }
        return _values[index].objectValue
    }

    internal func setValue(_ value: Any?, at index: Int) {
        fireFaultIfNeeded(triggeredBy: index)
        let kind = layout.storageKinds[index]
        switch kind {
        case .toOne:
            if let value, !(value is NSNull), !(value is NSManagedObject) { refuseRelationshipValue(value, at: index) }
            setToOne(value as? NSManagedObject, at: index)
            return
        case .toMany, .orderedToMany:
            if let value, !(value is NSNull), !Self.isCollectionOfObjects(value) { refuseRelationshipValue(value, at: index) }
            setToMany(objectsFrom: value, at: index)
            return
        case .other:
            if let composite = composite(at: index) { return setCompositeValue(value, composite, at: index) }
        default:
            break
        }
        if let value, let converted = StoreValue.fastConvert(value, kind: kind) {
            setStoreValue(converted, at: index)
        } else if let converted = StoreValue.storage(of: value, for: layout.attributeTypes[index]) {
            setStoreValue(converted, at: index)
        } else {
            setMistyped(value!, at: index) // never nil: nil is .null
        }
    }

    /// Keeps a value of the wrong type for its attribute as given, for validation to report at
    /// save (Apple raises at once), and marks the object and its context as holding one.
    internal func setMistyped(_ value: Any, at index: Int) {
        _hasMistypedValue = true
        _context?.heldMistypedValue = true
        setStoreValue(.object(ObjectBox(value)), at: index)
    }

    /// The fast path for typed accessors: sets an attribute's storage value and records the change.
    internal func setStoreValue(_ value: StoreValue, at index: Int) {
        fireFaultIfNeeded(triggeredBy: index)
        if case .int(let v) = value { _values.setInt64(v, at: index) } else { _values[index] = value }
        markChanged(index)
    }

    @inline(__always)
    internal func markChanged(_ index: Int) {
        insertChanged(index)
        // Inserted and deleted objects are in their change set already, and so are updated
        // ones, which the next `ObjectsDidChange` reports again if the last one did.
        if !_isInserted && !_isDeleted {
            if !_isUpdated {
                _context?.objectDidChange(self)
            } else if let context = _context, context.updated.isBeforeMark(self) {
                context.updatedObjectDidChangeAgain(self)
            }
        } else if let reference = _contextReference {
            // Inserted or deleted: `_context` read without a retain (the bulk-insert path).
            reference._withUnsafeGuaranteedRef { context in
                // Noted for undo (with an undo manager only).
                if context.undoTracking != nil { context.noteUndoableChange(self) }
                guard _isInserted else { return }
                // A new object that an `ObjectsDidChange` reported inserted: the next one reports it
                // updated, as Apple's does (a fetched results controller places it again).
                if !_isDeleted && context.inserted.isBeforeMark(self) { context.insertedObjectDidChangeAgain(self) }
                // A new object of a subclass, changed while a save calls `willSave`: its own runs again.
                if !_isPlain && context.isCallingWillSave { context.insertedObjectDidChangeInWillSave(self) }
            }
        }
        // Only an object a tracking read has a registrar (extras are rare, and the field is nil).
        if _extras?.observation != nil { observedPropertyDidChange(at: index) }
    }

    // MARK: Changes

    /// The persistent properties changed since the last save, with their new values.
    open func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        for index in _changed {
            let property = layout.properties[index]
            if property.isTransient { continue }
            if property is NSAttributeDescription, let snapshot = _snapshot, snapshot.values[index] == _values[index] { continue }
            // A composite's leaf: the composite's whole value.
            let reported = reportedProperty(at: index)
            result[reported.name] = primitiveValue(at: reported.index) ?? NSNull()
        }
        return result
    }

    /// Like ``changedValues()`` but including transient properties.
    open func changedValuesForCurrentEvent() -> [String: Any] {
        var result: [String: Any] = [:]
        for index in _changed {
            let reported = reportedProperty(at: index)
            result[reported.name] = primitiveValue(at: reported.index) ?? NSNull()
        }
        return result
    }

    /// The values as last fetched or saved, for `keys` (all persistent properties when `nil`).
    open func committedValues(forKeys keys: [String]?) -> [String: Any] {
        let names = keys ?? layout.properties.filter { !$0.isTransient && !($0 is CompositeLeafAttribute) }.map(\.name)
        var result: [String: Any] = [:]
        for name in names {
            guard let index = layout.nameTable.index(of: name) else { continue }
            let property = layout.properties[index]
            guard let snapshot = _snapshot else { result[name] = NSNull(); continue }
            if let relationship = property as? NSRelationshipDescription {
                if relationship.isToMany {
                    result[name] = Set(committedMembers(at: index).compactMap { _context?.object(with: $0) })
                } else if case .objectID(let id) = snapshot.values[index] {
                    result[name] = _context?.object(with: id) ?? NSNull()
                } else {
                    result[name] = NSNull()
                }
            } else if let composite = property as? NSCompositeAttributeDescription {
                result[name] = CompositeValues.assemble(composite) { snapshot.values[$0].objectValue } ?? NSNull()
            } else {
                result[name] = snapshot.values[index].objectValue ?? NSNull()
            }
        }
        return result
    }

    /// The IDs the store holds for the to-many relationship at `index`; if the store fails, none
    /// (what the object has), and its context records the error (the next save throws it).
    private func committedMembers(at index: Int) -> [NSManagedObjectID] {
        guard let context = _context else { return [] }
        do {
            return try context.relatedObjectIDs(of: self, index: index)
        } catch {
            context.recordUnfulfilledFault(error, of: self, relationship: index)
            return []
        }
    }

    /// Identity, as on Apple platforms (subclasses must not override `hash` or `isEqual(_:)`):
    /// the object's address, not a hash of it, since sets of objects are built on every save.
    open override var hash: Int { Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self))) }

    /// Identity: an object equals only itself. (Decided on the value's dynamic type and address,
    /// without a dynamic cast: sets of objects compare elements on every hash collision.)
    open override func isEqual(_ object: Any?) -> Bool {
        // What `==` of sets of objects passes: an object boxed as `NSObject`, read in place.
        if let other = ExistentialPeek.object(in: object, boxedAs: Swift.type(of: self)) {
            return other == UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        }
        guard let object, Swift.type(of: object) == Swift.type(of: self) else { return false }
        // Same class, so the existential holds a reference in its first word.
        let address = withUnsafeBytes(of: object) { $0.load(as: UnsafeRawPointer?.self) }
        return address == UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }

    open override var description: String {
        let state = _isFault ? "<fault>" : "{" + layout.properties.compactMap { property -> String? in
            guard property is NSAttributeDescription, !(property is CompositeLeafAttribute) else { return nil }
            let value = (property as? NSCompositeAttributeDescription).map { composite in
                _values[property.index].objectValue ?? CompositeValues.assemble(composite) { _values[$0].objectValue } as Any?
            } ?? _values[property.index].objectValue
            return "\(property.name) = \(value ?? "nil")"
        }.joined(separator: "; ") + "}"
        return "<\(type(of: self)): \(entity.name ?? "")> (entity: \(entity.name ?? ""); id: \(objectID.uriRepresentation().absoluteString); data: \(state))"
    }
}

/// Models in use by coordinators, for ``NSManagedObject/entity()``.
internal enum LoadedModels {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var models: [WeakModel] = []
    private struct WeakModel { weak var model: NSManagedObjectModel? }

    static func add(_ model: NSManagedObjectModel) {
        lock.lock(); defer { lock.unlock() }
        models.removeAll { $0.model == nil || $0.model === model }
        models.append(WeakModel(model: model))
    }

    static var all: [NSManagedObjectModel] {
        lock.lock(); defer { lock.unlock() }
        return models.reversed().compactMap(\.model)
    }
}
