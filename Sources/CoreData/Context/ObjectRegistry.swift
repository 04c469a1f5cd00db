internal import CoreDataShims

/// A context's objects by ID: an open-addressing hash table keyed by `IDKey`, holding objects
/// unretained. Every fetched object is inserted and every deallocated one removed, so this is on
/// the fetch hot path.
///
/// Slots are 24 bytes (key value, packed store and root, object bits), and the hash keeps runs
/// of 16 consecutive primary keys in consecutive slots: a fetch inserts rows in key order, so
/// inserting, finding and removing them walks memory in order instead of at random.
///
/// The objects a save gives permanent keys enter the table only when it is next used
/// (``registerLater(_:key:)``): after a bulk import they usually die first.
internal struct ObjectRegistry {
    private struct Slot {
        var value: Int64
        /// The store tag and the root entity number, packed (`IDKey.packedOwner`).
        var owner: Int64
        /// The object's address; 0 for an empty slot, 1 for a removed one (probing continues past it).
        var bits: UInt

        static let empty = Slot(value: 0, owner: 0, bits: 0)
        static let tombstone: UInt = 1
        var isLive: Bool { bits > Slot.tombstone }
    }

    private var slots: [Slot]
    private var mask: Int
    private(set) var count = 0
    private var used = 0 // live entries plus tombstones
    /// How many times the table was rebuilt (for tests: a churn must not rebuild it per insert).
    private(set) var rebuilds = 0
    /// The address of the context whose registry this is (`NSManagedObject`'s context word).
    var contextBits: UInt = 0
    /// The addresses of objects met in the table while being deallocated whose `deinit` had
    /// already claimed the context (``meetDeallocating(_:value:owner:)``): the context waits, if
    /// it goes, until each has left (``remove(_:ifObjectAt:)``), since each reaches it through
    /// its pointer.
    var awaitedDeinits: Set<UInt> = []
    /// The IDs of a store you write that entered or left the table since the context last told
    /// the stores (`StoreRegistrations.swift`); always empty for the built-in stores' objects.
    var storeRegistrations = StoreRegistrations()

    /// Objects registered but not in the table yet, in the order a save registered them, all
    /// under keys of one owner (``deferredOwner``); those before ``deferredHead`` have gone.
    /// Counted in ``count``.
    private var deferred: [Deferred] = []
    private var deferredHead = 0
    private var deferredOwner: Int64 = 0
    private struct Deferred {
        var value: Int64
        var bits: UInt
    }

    init() {
        slots = Array(repeating: .empty, count: 16)
        mask = 15
    }

    @inline(__always)
    private static func hash(_ value: Int64, _ owner: Int64) -> Int {
        // Blocks of 16 keys are scattered by a multiplicative hash; keys within a block stay adjacent.
        var h = UInt64(bitPattern: value >> 4) &* 0x9E37_79B9_7F4A_7C15
        h ^= UInt64(bitPattern: owner) &* 0xC2B2_AE3D_27D4_EB4F
        h ^= h >> 29
        return Int(truncatingIfNeeded: (h << 4) | UInt64(bitPattern: value & 15))
    }

    /// The object under `key`, retained for the caller; `nil` if there is none, or if its last
    /// strong reference went on another thread and its `deinit` is waiting for this lock to
    /// remove it (a reference taken now would outlive the object). A caller that puts a new
    /// object under the key replaces the dying one, whose `deinit` then leaves the new one alone.
    mutating func object(for key: IDKey) -> NSManagedObject? {
        guard let entry = self[key] else { return nil }
        if let object = Self.retainedUnlessDeallocating(entry) { return object }
        meetDeallocating(entry, value: key.value, owner: key.packedOwner)
        return nil
    }

    /// An entry whose object is being deallocated (its strong count reached zero; its `deinit`
    /// runs on another thread, or further up this one's stack, as when the object's own stored
    /// properties held the last reference to the context): if the `deinit` has not claimed the
    /// context yet, the object is detached and its entry removed here, and the `deinit` never
    /// reaches the context; if it has, the `deinit` removes the entry, and the context waits for
    /// that if it goes first (``awaitedDeinits``).
    private mutating func meetDeallocating(_ entry: Unmanaged<NSManagedObject>, value: Int64, owner: Int64) {
        // The entry goes first, while the object's memory is certain to be there (a `deinit`
        // that reaches this context can't end before this lock is let go); then the word.
        remove(value: value, owner: owner, ifObjectAt: entry.toOpaque())
        if entry._withUnsafeGuaranteedRef({ $0.detachDeallocating(from: contextBits) }) == .willUnregister {
            awaitedDeinits.insert(UInt(bitPattern: entry.toOpaque()))
        }
    }

    /// `object`, retained, or `nil` if it is being deallocated (`coredata_try_retain`).
    @inline(__always)
    static func retainedUnlessDeallocating(_ object: Unmanaged<NSManagedObject>) -> NSManagedObject? {
        coredata_try_retain(object.toOpaque()) ? object.takeRetainedValue() : nil
    }

    /// The key's entry, unretained: for comparing addresses and for registering; reading an
    /// object through it is ``object(for:)``.
    subscript(key: IDKey) -> Unmanaged<NSManagedObject>? {
        mutating get {
            moveDeferredIntoTable()
            let owner = key.packedOwner
            var index = Self.hash(key.value, owner) & mask
            while true {
                let slot = slots[index]
                if slot.bits == 0 { return nil }
                if slot.isLive && slot.value == key.value && slot.owner == owner {
                    return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: slot.bits)!)
                }
                index = (index &+ 1) & mask
            }
        }
        set {
            moveDeferredIntoTable()
            if let newValue { insertNoting(newValue, for: key.value, owner: key.packedOwner) } else { remove(key) }
        }
    }

    /// Registers `object` under `key` (a permanent key a save gave it), to enter the table at its
    /// next use. The objects of a bulk import usually die right after their save, in the order
    /// it saved them: each then leaves from the head of the list (``remove(_:ifObjectAt:)``),
    /// and the table never grows for them (for 50,000 objects it would take 3 MB of fresh memory).
    mutating func registerLater(_ object: Unmanaged<NSManagedObject>, key: IDKey) {
        let owner = key.packedOwner
        if deferred.count == deferredHead { deferred.removeAll(keepingCapacity: true); deferredHead = 0; deferredOwner = owner }
        // (A store you write hears of its objects as they enter: they go straight into the table.)
        guard owner == deferredOwner && !IDKey.isReported(owner: owner) else { return insertNoting(object, for: key.value, owner: owner) }
        deferred.append(Deferred(value: key.value, bits: UInt(bitPattern: object.toOpaque())))
        count += 1
    }

    /// Removes a temporary key (an object that was saved), leaving the objects registered with
    /// ``registerLater(_:key:)`` where they are: those have permanent keys, never this one.
    mutating func removeTemporary(_ key: IDKey) {
        assert(key.store == IDKey.temporaryStore, "removeTemporary(_:) takes temporary keys only")
        remove(key)
    }

    /// Makes room for `count` objects of `owner` (``IDKey/packedOwner``) to be registered with
    /// ``registerLater(_:key:)``. The list holds one owner's objects: those another owner's save
    /// left in it, still alive, go into the table first, so that this save's objects wait in the
    /// list rather than go into the table one by one.
    mutating func reserveDeferred(_ count: Int, owner: Int64) {
        if deferredHead < deferred.count && owner != deferredOwner { insertDeferred() }
        deferred.reserveCapacity(deferred.count + count)
    }

    /// Puts the objects registered with ``registerLater(_:key:)`` into the table.
    @inline(__always)
    private mutating func moveDeferredIntoTable() {
        if deferredHead < deferred.count { insertDeferred() }
    }

    @inline(never)
    private mutating func insertDeferred() {
        let entries = deferred[deferredHead...]
        deferred = []
        deferredHead = 0
        count -= entries.count
        reserveCapacity(entries.count)
        for entry in entries {
            insert(Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: entry.bits)!), for: entry.value, owner: deferredOwner)
        }
    }

    /// ``insert(_:for:owner:)``, noting a key of a store you write that was not in the table
    /// (an object that replaces another under its key registers nothing more).
    @inline(__always)
    private mutating func insertNoting(_ object: Unmanaged<NSManagedObject>, for value: Int64, owner: Int64) {
        if insert(object, for: value, owner: owner) && IDKey.isReported(owner: owner) {
            storeRegistrations.noteRegistered(object, key: value, owner: owner)
        }
    }

    /// Puts `object` under the key; whether the key was not in the table before.
    @discardableResult
    private mutating func insert(_ object: Unmanaged<NSManagedObject>, for value: Int64, owner: Int64) -> Bool {
        if (used + 1) * 2 > slots.count { grow(to: Self.capacity(for: count + 1)) }
        let bits = UInt(bitPattern: object.toOpaque())
        var index = Self.hash(value, owner) & mask
        var firstFree = -1
        while true {
            let slot = slots[index]
            if slot.isLive {
                if slot.value == value && slot.owner == owner { slots[index].bits = bits; return false }
            } else if slot.bits == Slot.tombstone {
                if firstFree < 0 { firstFree = index }
            } else {
                break
            }
            index = (index &+ 1) & mask
        }
        if firstFree >= 0 {
            slots[firstFree] = Slot(value: value, owner: owner, bits: bits)
        } else {
            slots[index] = Slot(value: value, owner: owner, bits: bits)
            used += 1
        }
        count += 1
        return true
    }

    private mutating func remove(_ key: IDKey) {
        let owner = key.packedOwner
        var index = Self.hash(key.value, owner) & mask
        while true {
            let slot = slots[index]
            if slot.bits == 0 { return }
            if slot.isLive && slot.value == key.value && slot.owner == owner {
                if IDKey.isReported(owner: owner) { storeRegistrations.noteUnregistered(Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: slot.bits)!), key: slot.value, owner: owner) }
                slots[index].bits = Slot.tombstone
                count -= 1
                return
            }
            index = (index &+ 1) & mask
        }
    }

    /// Removes `key` if it holds the object at `address` (an object's `deinit`: a key whose
    /// object was never registered, or has moved, is left alone).
    mutating func remove(_ key: IDKey, ifObjectAt address: UnsafeMutableRawPointer) {
        remove(value: key.value, owner: key.packedOwner, ifObjectAt: address)
    }

    private mutating func remove(value: Int64, owner: Int64, ifObjectAt address: UnsafeMutableRawPointer) {
        let bits = UInt(bitPattern: address)
        if !awaitedDeinits.isEmpty { awaitedDeinits.remove(bits) }
        if deferredHead < deferred.count {
            // Saved objects dying in the order they were saved leave the deferred list.
            let entry = deferred[deferredHead]
            if entry.bits == bits && entry.value == value && owner == deferredOwner {
                deferredHead += 1
                count -= 1
                if deferredHead == deferred.count { deferred = []; deferredHead = 0 }
                return
            }
            insertDeferred()
        }
        var index = Self.hash(value, owner) & mask
        while true {
            let slot = slots[index]
            if slot.bits == 0 { return }
            if slot.bits == bits && slot.value == value && slot.owner == owner {
                // (The object is in its `deinit`: its entity and store are still there to read.)
                if IDKey.isReported(owner: owner) { storeRegistrations.noteUnregistered(Unmanaged.fromOpaque(address), key: slot.value, owner: owner) }
                slots[index].bits = Slot.tombstone
                count -= 1
                return
            }
            index = (index &+ 1) & mask
        }
    }

    private mutating func grow(to capacity: Int) {
        rebuilds += 1
        let old = slots
        slots = Array(repeating: .empty, count: capacity)
        mask = capacity - 1
        // The objects waiting in the deferred list are counted in `count` but not in the table:
        // they stay counted (a growth while a save registers objects of another owner straight
        // into the table must not lose them, or moving them in later takes `count` to 0 or
        // below, and `reserveCapacity` then empties a table of live objects).
        count = deferred.count - deferredHead
        used = 0
        for slot in old where slot.isLive {
            insert(Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: slot.bits)!), for: slot.value, owner: slot.owner)
        }
    }

    /// Makes room for `additional` new keys. When that takes a new table, removed keys' slots
    /// (tombstones) are not carried over, so the table is sized for the live keys: remove the
    /// keys that are leaving first.
    mutating func reserveCapacity(_ additional: Int) {
        moveDeferredIntoTable()
        guard (used + additional) * 2 > slots.count else { return }
        let capacity = max(slots.count, Self.capacity(for: count + additional))
        if count == 0 && capacity == slots.count {
            // Only removed keys left (a save moved every registered object): the table is
            // emptied where it is instead of replaced by a new one of the same size.
            slots.withUnsafeMutableBufferPointer { $0.update(repeating: .empty) }
            used = 0
            return
        }
        grow(to: capacity)
    }

    /// Empties the table (a reset, or the context going): the keys of stores you write are noted
    /// as unregistered.
    mutating func removeAll() {
        let awaited = awaitedDeinits
        var registrations = storeRegistrations
        if registrations.everNoted {
            for slot in slots where slot.isLive && IDKey.isReported(owner: slot.owner) {
                registrations.noteUnregistered(Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: slot.bits)!), key: slot.value, owner: slot.owner)
            }
        }
        self = ObjectRegistry()
        storeRegistrations = registrations
        awaitedDeinits = awaited
    }

    /// The table size for `needed` live keys: the smallest power of two (16 at least) they fill
    /// to 7/16 at most. A table grows when its live keys and removed ones (tombstones) fill half
    /// of it, and a growth drops the tombstones: sized this way, it always leaves a sixteenth of
    /// the table free for inserts before the next growth. (Sized for exactly twice the keys, a
    /// steady number of live keys near a power of two would rehash the whole table on almost
    /// every insert of a churn: removed objects leave tombstones. 3/8 would leave more room, but
    /// then a save of 50,000 new objects needs a table of 262,144 slots, not 131,072: 3 MB more
    /// of fresh memory.) Plain growth doubles the table.
    private static func capacity(for needed: Int) -> Int {
        var capacity = 16
        while needed * 16 > capacity * 7 { capacity *= 2 }
        return capacity
    }

    /// The registered objects, retained; those being deallocated are left out
    /// (``meetDeallocating(_:value:owner:)``).
    mutating func objects() -> [NSManagedObject] {
        moveDeferredIntoTable()
        var objects: [NSManagedObject] = []
        var deallocating: [Slot] = []
        objects.reserveCapacity(count)
        for slot in slots where slot.isLive {
            if let object = Self.retainedUnlessDeallocating(Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: slot.bits)!)) {
                objects.append(object)
            } else {
                deallocating.append(slot)
            }
        }
        for slot in deallocating {
            meetDeallocating(Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: slot.bits)!), value: slot.value, owner: slot.owner)
        }
        return objects
    }
}

extension IDKey {
    /// The store tag and root entity number in one integer, for the registry's compact slots.
    @inline(__always)
    var packedOwner: Int64 { (Int64(truncatingIfNeeded: store) << 32) ^ Int64(truncatingIfNeeded: root) }
}
