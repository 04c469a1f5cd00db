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

/// An insertion-ordered set of objects with O(1) insert, remove and membership.
internal struct OrderedObjectSet {
    private var slots: [NSManagedObject?] = []
    private var positions: [ObjectIdentifier: Int] = [:]

    var count: Int { positions.count }
    var isEmpty: Bool { positions.isEmpty }
    func contains(_ object: NSManagedObject) -> Bool { positions[ObjectIdentifier(object)] != nil }

    @discardableResult
    mutating func insert(_ object: NSManagedObject) -> Bool {
        let key = ObjectIdentifier(object)
        guard positions[key] == nil else { return false }
        positions[key] = slots.count
        slots.append(object)
        return true
    }

    @discardableResult
    mutating func remove(_ object: NSManagedObject) -> Bool {
        guard let index = positions.removeValue(forKey: ObjectIdentifier(object)) else { return false }
        slots[index] = nil
        if positions.isEmpty { slots.removeAll(keepingCapacity: true) }
        else if slots.count > 64 && positions.count < slots.count / 2 { compact() }
        return true
    }

    mutating func removeAll() {
        slots.removeAll()
        positions.removeAll()
    }

    private mutating func compact() {
        slots = slots.filter { $0 != nil }
        positions.removeAll(keepingCapacity: true)
        for (index, object) in slots.enumerated() { positions[ObjectIdentifier(object!)] = index }
    }

    /// The objects in insertion order.
    var objects: [NSManagedObject] { slots.compactMap { $0 } }
}
