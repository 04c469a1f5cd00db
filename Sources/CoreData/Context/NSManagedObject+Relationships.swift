import Foundation

// Relationship values and the inverse maintenance that keeps both sides in step as soon as one
// side is set. Objects of other contexts are never touched: the relationship keeps the foreign
// object and the next save throws an error naming the relationship. An object in no context
// (`insertInto: nil`) takes part: inserted later into this context, it saves both sides; left
// out, the save throws as for another context's object.

extension NSManagedObject {
    /// Whether `other` can take part in inverse maintenance with this object: both in one
    /// context, or one of them in none.
    @inline(__always)
    internal func sharesContext(with other: NSManagedObject) -> Bool {
        other._context === _context || other._context == nil || _context == nil
    }

    /// Whether `object`'s side of `inverse` follows a change of this side: it shares the
    /// context (``sharesContext(with:)``) and has the relationship (``has(_:_:)``).
    @inline(__always)
    private func keepsInverse(_ inverse: NSRelationshipDescription, with object: NSManagedObject) -> Bool {
        sharesContext(with: object) && Self.has(inverse, object)
    }

    /// Whether `object` has the relationship `inverse`: not when the inverse is declared on a
    /// sub-entity of the destination and `object` is of another (it has no slot for it).
    @inline(__always)
    internal static func has(_ inverse: NSRelationshipDescription, _ object: NSManagedObject) -> Bool {
        has(inverse, object.entity)
    }

    /// Whether objects of `entity` have the relationship `inverse`.
    @inline(__always)
    internal static func has(_ inverse: NSRelationshipDescription, _ entity: NSEntityDescription) -> Bool {
        guard let owner = inverse.entity, entity !== owner else { return true }
        return entity.isKindOf(entity: owner)
    }

    internal func toOneObject(at index: Int) -> NSManagedObject? {
        fireFaultIfNeeded(triggeredBy: index)
        if case .toOne(let object)? = _relations[index] { return object }
        guard case .objectID(let id) = _values[index] else { return nil }
        let object = _context?.object(with: id)
        _relations[index] = .toOne(object)
        return object
    }

    /// The objects of the to-many relationship at `index`, loaded on first use. If the store
    /// fails, the list is empty (what the object has) and not kept as loaded (the next use tries
    /// again); the context records the error, which its next save throws.
    internal func toManyList(at index: Int) -> ObjectList {
        fireFaultIfNeeded(triggeredBy: index)
        if case .toMany(let list)? = _relations[index] { return list }
        return loadToManyList(at: index)
    }

    /// ``toManyList(at:)``'s first use of a relationship.
    @inline(never)
    private func loadToManyList(at index: Int) -> ObjectList {
        do {
            return try storedToManyList(at: index)
        } catch {
            _context?.recordUnfulfilledFault(error, of: self, relationship: index)
            return ObjectList()
        }
    }

    /// ``toManyList(at:)``, throwing the store's error (``NSManagedObjectContext/unfulfilledFaultError(_:for:relationship:)``)
    /// rather than returning what the object has.
    internal func storedToManyList(at index: Int) throws -> ObjectList {
        fireFaultIfNeeded(triggeredBy: index)
        if case .toMany(let list)? = _relations[index] { return list }
        var list = ObjectList()
        if let context = contextReadingStoredRelationships {
            let ids = try context.relatedObjectIDs(of: self, index: index)
            list = ObjectList(ids.map { context.object(with: $0) }, original: ids)
            if context.hasUnfulfilledFaults { context.forgetUnfulfilledFault(of: self, relationship: index) }
        }
        _relations[index] = .toMany(list)
        return list
    }

    /// The context that reads this object's to-many relationships from its store (or its
    /// parent): `nil` for a new object, which has none there yet, and for one in no context.
    internal var contextReadingStoredRelationships: NSManagedObjectContext? {
        guard !_isInserted, let context = _context, !objectID.isTemporaryID || context.parent != nil else { return nil }
        return context
    }

    private func modifyList(at index: Int, _ body: (inout ObjectList) -> Void) {
        var list = toManyList(at: index)
        _relations[index] = nil // keep the list uniquely referenced while it changes
        body(&list)
        _relations[index] = .toMany(list)
        markChanged(index)
    }

    // MARK: Raw changes: one side only

    internal func rawSetToOne(_ object: NSManagedObject?, at index: Int) {
        fireFaultIfNeeded(triggeredBy: index)
        _relations[index] = .toOne(object)
        markChanged(index)
    }

    internal func rawAdd(_ object: NSManagedObject, toManyAt index: Int) {
        modifyList(at: index) { $0.append(object) }
    }

    internal func rawRemove(_ object: NSManagedObject, fromManyAt index: Int) {
        modifyList(at: index) { $0.remove(object) }
    }

    // MARK: Changes with inverse maintenance

    /// Stops the process when `object` is not of the relationship's destination entity (or one of
    /// its sub-entities), as Apple raises `NSInvalidArgumentException` ("Unacceptable type of value
    /// for to-one relationship"): a programmer error on setters that cannot throw. Without it the
    /// inverse would be kept in step in a slot of another property.
    internal func checkDestination(_ object: NSManagedObject, _ relationship: NSRelationshipDescription) {
        guard let destination = relationship.destinationEntity else { return }
        var entity: NSEntityDescription? = object.entity
        while let current = entity {
            if current === destination { return }
            entity = current.superentity
        }
        preconditionFailure("CoreData: Unacceptable type of value for \(relationship.isToMany ? "to-many" : "to-one") relationship: property = \"\(relationship.name)\"; desired type = \(destination.name ?? "?"); given type = \(object.entity.name ?? "?"), set on an object of entity '\(self.entity.name ?? "")'")
    }

    internal func setToOne(_ newValue: NSManagedObject?, at index: Int) {
        let relationship = layout.properties[index] as! NSRelationshipDescription
        if let newValue { checkDestination(newValue, relationship) }
        let old = toOneObject(at: index)
        if old === newValue { return }
        rawSetToOne(newValue, at: index)
        guard let inverse = relationship.inverseRelationship else { return }
        if let old, keepsInverse(inverse, with: old) {
            if inverse.isToMany { old.rawRemove(self, fromManyAt: inverse.index) }
            else if old.toOneObject(at: inverse.index) === self { old.rawSetToOne(nil, at: inverse.index) }
        }
        if let newValue, keepsInverse(inverse, with: newValue) {
            if inverse.isToMany {
                newValue.rawAdd(self, toManyAt: inverse.index)
            } else {
                if let previous = newValue.toOneObject(at: inverse.index), previous !== self, sharesContext(with: previous) {
                    previous.rawSetToOne(nil, at: index)
                }
                newValue.rawSetToOne(self, at: inverse.index)
            }
        }
    }

    internal func addToMany(_ object: NSManagedObject, at index: Int, position: Int? = nil) {
        let relationship = layout.properties[index] as! NSRelationshipDescription
        checkDestination(object, relationship)
        if toManyList(at: index).contains(object) { return }
        modifyList(at: index) { list in
            if let position { list.insert(object, at: position) } else { list.append(object) }
        }
        guard let inverse = relationship.inverseRelationship, keepsInverse(inverse, with: object) else { return }
        if inverse.isToMany {
            object.rawAdd(self, toManyAt: inverse.index)
        } else {
            if let previous = object.toOneObject(at: inverse.index), previous !== self, sharesContext(with: previous) {
                previous.rawRemove(object, fromManyAt: index)
            }
            object.rawSetToOne(self, at: inverse.index)
        }
    }

    internal func removeFromMany(_ object: NSManagedObject, at index: Int) {
        let relationship = layout.properties[index] as! NSRelationshipDescription
        guard toManyList(at: index).contains(object) else { return }
        rawRemove(object, fromManyAt: index)
        guard let inverse = relationship.inverseRelationship, keepsInverse(inverse, with: object) else { return }
        if inverse.isToMany {
            object.rawRemove(self, fromManyAt: inverse.index)
        } else if object.toOneObject(at: inverse.index) === self {
            object.rawSetToOne(nil, at: inverse.index)
        }
    }

    /// Replaces a to-many relationship's objects with those of a `Set`, `NSSet`, `NSOrderedSet` or array.
    internal func setToMany(objectsFrom value: Any?, at index: Int) {
        setToMany(Self.objects(from: value), at: index)
    }

    /// Replaces a to-many relationship's objects with `newObjects` (in this order, for an ordered one).
    internal func setToMany(_ newObjects: [NSManagedObject], at index: Int) {
        let current = toManyList(at: index).objects
        let incoming = Set(newObjects.map(ObjectIdentifier.init))
        for object in current where !incoming.contains(ObjectIdentifier(object)) {
            removeFromMany(object, at: index)
        }
        for object in newObjects { addToMany(object, at: index) }
        let relationship = layout.properties[index] as! NSRelationshipDescription
        if relationship.isOrdered {
            modifyList(at: index) { list in list = ObjectList(newObjects, original: list.original) }
        }
    }

    /// Whether `value` is a collection (set, array, ordered set) of managed objects only: what a
    /// to-many relationship takes.
    internal static func isCollectionOfObjects(_ value: Any) -> Bool {
        switch value {
        case is Set<NSManagedObject>, is [NSManagedObject]: return true
        case let ordered as NSOrderedSet: return ordered.array.allSatisfy { $0 is NSManagedObject }
        case let set as NSSet: return set.allObjects.allSatisfy { $0 is NSManagedObject }
        case let array as NSArray: return array.allSatisfy { $0 is NSManagedObject }
        case is NSManagedObject, is String: return false
        case let sequence as any Sequence:
            for element in sequence where !(element is NSManagedObject) { return false }
            return true
        default: return false
        }
    }

    /// Stops the process for a relationship value of the wrong kind (an object ID, a single
    /// object for a to-many, a string), as Apple's `NSInvalidArgumentException` does: a
    /// programmer error that `setValue(_:forKey:)`, which cannot throw, cannot report otherwise.
    internal func refuseRelationshipValue(_ value: Any, at index: Int) -> Never {
        let relationship = layout.properties[index] as! NSRelationshipDescription
        let desired = relationship.isToMany ? (relationship.isOrdered ? "NSOrderedSet of \(relationship.destinationEntity?.name ?? "?")" : "Set of \(relationship.destinationEntity?.name ?? "?")")
                                            : relationship.destinationEntity?.name ?? "?"
        preconditionFailure("CoreData: Unacceptable type of value for \(relationship.isToMany ? "to-many" : "to-one") relationship: property = \"\(relationship.name)\"; desired type = \(desired); given type = \(type(of: value)), set on an object of entity '\(entity.name ?? "")'")
    }

    internal static func objects(from value: Any?) -> [NSManagedObject] {
        switch value {
        case nil, is NSNull: return []
        case let set as Set<NSManagedObject>: return Array(set)
        case let array as [NSManagedObject]: return array
        case let ordered as NSOrderedSet: return ordered.array.compactMap { $0 as? NSManagedObject }
        case let set as NSSet: return set.allObjects.compactMap { $0 as? NSManagedObject }
        case let array as NSArray: return array.compactMap { $0 as? NSManagedObject }
        case let sequence as any Sequence:
            var result: [NSManagedObject] = []
            for element in sequence { if let object = element as? NSManagedObject { result.append(object) } }
            return result
        default: return []
        }
    }
}

/// The live set behind ``NSManagedObject/mutableSetValue(forKey:)``.
internal final class ManagedMutableSet: NSMutableSet {
    private let object: NSManagedObject
    private let index: Int

    init(object: NSManagedObject, index: Int) {
        self.object = object
        self.index = index
        super.init(capacity: 0)
    }

    required init(capacity numItems: Int) { preconditionFailure("ManagedMutableSet is created by mutableSetValue(forKey:) only") }
    required init?(coder: NSCoder) { preconditionFailure("ManagedMutableSet can't be decoded") }


    private var objects: [NSManagedObject] { object.toManyList(at: index).objects }
    override var count: Int { object.toManyList(at: index).count }
    override func member(_ candidate: Any) -> Any? {
        guard let candidate = candidate as? NSManagedObject else { return nil }
        return object.toManyList(at: index).contains(candidate) ? candidate : nil
    }
    override func objectEnumerator() -> NSEnumerator { NSArray(array: objects).objectEnumerator() }
    override var allObjects: [Any] { objects }
    override func add(_ element: Any) {
        guard let element = element as? NSManagedObject else { return }
        object.addToMany(element, at: index)
    }
    override func remove(_ element: Any) {
        guard let element = element as? NSManagedObject else { return }
        object.removeFromMany(element, at: index)
    }
    override func removeAllObjects() { for element in objects { remove(element) } }
    override func copy(with zone: NSZone? = nil) -> Any { NSSet(array: objects) }
}

/// The live ordered set behind ``NSManagedObject/mutableOrderedSetValue(forKey:)``.
///
/// Foundation on Linux does not route `NSMutableOrderedSet`'s methods through a few primitives,
/// so the readers and mutators it lets subclasses override are overridden here: reads come from
/// the relationship, and every change is applied to it as a new order (with inverse
/// maintenance). Linux difference: `firstObject`, `lastObject`, `array` and enumeration are not
/// overridable there; read `value(forKey:)` for those.
internal final class ManagedMutableOrderedSet: NSMutableOrderedSet {
    private let object: NSManagedObject
    private let index: Int

    init(object: NSManagedObject, index: Int) {
        self.object = object
        self.index = index
        super.init(capacity: 0)
    }

    required init(arrayLiteral elements: Any...) { preconditionFailure("ManagedMutableOrderedSet is created by mutableOrderedSetValue(forKey:) only") }
    required init?(coder: NSCoder) { preconditionFailure("ManagedMutableOrderedSet can't be decoded") }

    private var objects: [NSManagedObject] { object.toManyList(at: index).objects }

    /// Applies a change to the relationship's order. Elements that are not managed objects are ignored.
    private func mutate(_ change: (inout [NSManagedObject]) -> Void) {
        var array = objects
        change(&array)
        var seen = Set<ObjectIdentifier>()
        let unique = array.filter { seen.insert(ObjectIdentifier($0)).inserted }
        object.setToMany(objectsFrom: NSOrderedSet(array: unique), at: index)
    }

    private static func managed(_ element: Any?) -> NSManagedObject? { element as? NSManagedObject }

    // Reading
    override var count: Int { object.toManyList(at: index).count }
    override func object(at idx: Int) -> Any { objects[idx] }
    override func index(of candidate: Any) -> Int {
        guard let candidate = candidate as? NSManagedObject else { return NSNotFound }
        return objects.firstIndex { $0 === candidate } ?? NSNotFound
    }
    override func contains(_ candidate: Any) -> Bool {
        guard let candidate = candidate as? NSManagedObject else { return false }
        return object.toManyList(at: index).contains(candidate)
    }
    override func copy(with zone: NSZone? = nil) -> Any { NSOrderedSet(array: objects) }
    override func mutableCopy(with zone: NSZone? = nil) -> Any { NSMutableOrderedSet(array: objects) }

    // Changing
    override func insert(_ element: Any, at idx: Int) {
        guard let element = Self.managed(element) else { return }
        if object.toManyList(at: index).contains(element) { return }
        object.addToMany(element, at: index, position: idx)
    }
    override func add(_ element: Any?) {
        guard let element = Self.managed(element) else { return }
        object.addToMany(element, at: index)
    }
    override func addObjects(from array: [Any]) {
        for element in array { add(element) }
    }
    override func remove(_ element: Any) {
        guard let element = Self.managed(element) else { return }
        object.removeFromMany(element, at: index)
    }
    override func removeObject(at idx: Int) { object.removeFromMany(objects[idx], at: index) }
    override func removeObjects(at indexes: IndexSet) { mutate { array in array.remove(atOffsets: indexes) } }
    override func removeObjects(in array: [Any]) {
        let doomed = Set(array.compactMap { Self.managed($0) }.map(ObjectIdentifier.init))
        mutate { $0.removeAll { doomed.contains(ObjectIdentifier($0)) } }
    }
    override func removeObjects(in range: NSRange) { mutate { $0.removeSubrange(range.location..<(range.location + range.length)) } }
    override func removeAllObjects() { mutate { $0.removeAll() } }
    override func replaceObject(at idx: Int, with element: Any) {
        guard let element = Self.managed(element) else { return }
        mutate { $0[idx] = element }
    }
    override func setObject(_ element: Any, at idx: Int) {
        guard let element = Self.managed(element) else { return }
        mutate { array in if idx == array.count { array.append(element) } else { array[idx] = element } }
    }
    override func exchangeObject(at idx1: Int, withObjectAt idx2: Int) { mutate { $0.swapAt(idx1, idx2) } }
    override func moveObjects(at indexes: IndexSet, to idx: Int) {
        mutate { array in
            let moving = indexes.map { array[$0] }
            array.remove(atOffsets: indexes)
            array.insert(contentsOf: moving, at: Swift.min(idx, array.count))
        }
    }
    override func insert(_ elements: [Any], at indexes: IndexSet) {
        mutate { array in
            for (element, position) in zip(elements.compactMap { Self.managed($0) }, indexes) { array.insert(element, at: Swift.min(position, array.count)) }
        }
    }
}

extension Array {
    /// Removes the elements at the given offsets.
    fileprivate mutating func remove(atOffsets offsets: IndexSet) {
        for offset in offsets.reversed() where offset < count { remove(at: offset) }
    }
}
