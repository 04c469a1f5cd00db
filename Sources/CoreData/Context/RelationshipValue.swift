import Foundation

/// A relationship's value once it has been materialized in an object.
internal enum RelationshipValue {
    case toOne(NSManagedObject?)
    case toMany(ObjectList)
}

/// The objects of a to-many relationship, in order (insertion order for unordered ones), with
/// O(1) membership tests. `original` is what the store holds, to compute join-table changes.
internal struct ObjectList {
    private(set) var objects: [NSManagedObject] = []
    private var members: Set<ObjectIdentifier> = []
    /// The IDs the store holds for this relationship, when it was read from a store.
    var original: [NSManagedObjectID] = []

    init() {}
    init(_ objects: [NSManagedObject], original: [NSManagedObjectID]) {
        for object in objects { append(object) }
        self.original = original
    }

    var count: Int { objects.count }
    func contains(_ object: NSManagedObject) -> Bool { members.contains(ObjectIdentifier(object)) }

    @discardableResult
    mutating func append(_ object: NSManagedObject) -> Bool {
        guard members.insert(ObjectIdentifier(object)).inserted else { return false }
        objects.append(object)
        return true
    }

    mutating func insert(_ object: NSManagedObject, at index: Int) {
        guard members.insert(ObjectIdentifier(object)).inserted else { return }
        objects.insert(object, at: min(max(index, 0), objects.count))
    }

    @discardableResult
    mutating func remove(_ object: NSManagedObject) -> Bool {
        guard members.remove(ObjectIdentifier(object)) != nil else { return false }
        if let index = objects.firstIndex(where: { $0 === object }) { objects.remove(at: index) }
        return true
    }
}

/// An insertion-ordered set of objects with O(1) insert, remove and membership, without
/// hashing: each object remembers its slot (`_changeSlot`). An object is in at most one of a
/// context's inserted, updated and deleted sets at a time, so one slot field serves all three.
internal struct OrderedObjectSet {
    private var slots: [NSManagedObject?] = []
    private(set) var count = 0
    /// ``objects`` as last made, until the set changes (a save asks for it several times).
    /// Forgotten before `slots` changes: when it is the slots' own buffer, a change then copies
    /// the buffer only if the caller still holds the array.
    private var cachedObjects: [NSManagedObject]?
    /// Whether an instance of a subclass of `NSManagedObject` has been added since
    /// ``forgetSubclassObjects()`` (sticky: removing objects does not clear it). While it is
    /// `false`, every object in the set is a plain `NSManagedObject`, whose `willSave` and
    /// `didSave` do nothing: a save need not call them (`NSManagedObjectContext.save()`).
    private(set) var mayHoldSubclassObjects = false
    /// The slots before it hold the objects that were in the set at the last ``setMark()``; the
    /// objects added since are after it. (For the updated set: the objects a context reported
    /// in its last `ObjectsDidChange`, and those changed since, which its next one reports.)
    private(set) var mark = 0

    private mutating func willChangeSlots() {
        if cachedObjects != nil { cachedObjects = nil } // (no release call per insert)
    }

    var isEmpty: Bool { count == 0 }

    func contains(_ object: NSManagedObject) -> Bool {
        let slot = Int(object._changeSlot)
        return slot >= 0 && slot < slots.count && slots[slot] === object
    }

    @discardableResult
    mutating func insert(_ object: NSManagedObject) -> Bool {
        guard !contains(object) else { return false }
        object._changeSlot = Int32(slots.count)
        if !object._isPlain { mayHoldSubclassObjects = true }
        willChangeSlots()
        slots.append(object)
        count += 1
        return true
    }

    @discardableResult
    mutating func remove(_ object: NSManagedObject) -> Bool {
        guard contains(object) else { return false }
        willChangeSlots()
        slots[Int(object._changeSlot)] = nil
        object._changeSlot = -1
        count -= 1
        if count == 0 { slots.removeAll(keepingCapacity: true); mark = 0 }
        else if slots.count > 64 && count < slots.count / 2 { compact() }
        return true
    }

    /// Marks the objects in the set now as being before the mark (``isBeforeMark(_:)``).
    mutating func setMark() { mark = slots.count }

    /// Whether `object`, a member, was in the set at the last ``setMark()``.
    @inline(__always)
    func isBeforeMark(_ object: NSManagedObject) -> Bool { Int(object._changeSlot) < mark }

    /// Clears ``mayHoldSubclassObjects`` (once the objects it was set for have left the set).
    mutating func forgetSubclassObjects() { mayHoldSubclassObjects = false }

    mutating func removeAll() {
        willChangeSlots()
        slots.removeAll()
        count = 0
        mark = 0
    }

    private mutating func compact() {
        willChangeSlots()
        mark = slots[..<mark].lazy.filter { $0 != nil }.count // the same objects stay before it
        slots = slots.filter { $0 != nil }
        for (index, object) in slots.enumerated() { object!._changeSlot = Int32(index) }
    }

    /// The objects in insertion order.
    var objects: [NSManagedObject] {
        mutating get {
            if let cachedObjects { return cachedObjects }
            // Without removed objects, the slots' own buffer: an optional reference and a
            // reference have the same layout, and no slot is `nil`. (No copy, and no retain and
            // release of each object: the common case, a save of new objects.)
            let objects = count == slots.count ? unsafeBitCast(slots, to: [NSManagedObject].self) : slots.compactMap { $0 }
            cachedObjects = objects
            return objects
        }
    }
}
