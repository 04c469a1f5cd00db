import Foundation

#if !canImport(Darwin)
/// The `NSMutableDictionary` an ``NSBatchInsertRequest``'s dictionary handler fills, one row at a
/// time (Linux only).
///
/// swift-corelibs-foundation's own `NSMutableDictionary` turns every key and value into an
/// `NSObject` and hashes the key's characters, on the way in and again when the store reads the
/// value back: for a handler that sets ten numbers per row, that was nine tenths of a batch
/// insert's time. This subclass keeps a value for each of the entity's attributes in a slot,
/// found by comparing the key with the attribute that usually comes next (handlers set the same
/// keys in the same order row after row), and hands the slots to ``BatchInsertRows`` as they
/// are. Any other key is kept aside, so that the row can be refused naming it. It is a complete
/// dictionary otherwise (`count`, `object(forKey:)`, enumeration), as the handler may read what
/// it wrote. Apple's Foundation has a fast dictionary of its own: on Apple platforms the handler
/// gets a plain `NSMutableDictionary`.
internal final class BatchRowDictionary: NSMutableDictionary {
    /// The attributes' names, by slot.
    private var names: [String] = []
    /// The value of each slot, valid where ``isSet`` says so (a value left from an earlier row is
    /// overwritten, not cleared: no existential is destroyed per value between rows).
    @exclusivity(unchecked) private(set) var slotValues: ContiguousArray<Any> = [] // written per value by the handler
    /// Whether each slot holds a value in this row.
    @exclusivity(unchecked) private(set) var isSet: ContiguousArray<Bool> = []
    /// Values whose key is no slot's, in the order their keys were first set.
    private(set) var otherKeys: [AnyHashable] = []
    private var otherValues: [AnyHashable: Any] = [:]
    /// How many slots hold a value.
    @exclusivity(unchecked) private var setSlots = 0
    /// The slot the next key is compared with first.
    @exclusivity(unchecked) private var cursor = 0

    /// A dictionary with a slot for each of `names`.
    init(slotNames names: [String]) {
        super.init(objects: nil, forKeys: nil, count: 0)
        self.names = names
        slotValues = ContiguousArray(repeating: (), count: names.count)
        isSet = ContiguousArray(repeating: false, count: names.count)
    }

    required init(objects: UnsafePointer<AnyObject>!, forKeys keys: UnsafePointer<NSObject>!, count: Int) {
        super.init(objects: nil, forKeys: nil, count: 0)
        for index in 0..<count { setObject(objects[index], forKey: AnyHashable(keys[index])) }
    }

    /// The slot of `key`, if it names one of the attributes. (A `String` key is read straight
    /// from its container: `AnyHashable`'s own `==` instantiates generic metadata per call, which
    /// cost more than the rest of the row.)
    private func slot(of key: AnyHashable) -> Int? {
        let name: String
        if case .string(let string)? = StoreValue.fastConvert(borrowing: key.base, kind: .string) {
            name = string
        } else if let string = key.base as? NSString {
            name = String(describing: string)
        } else {
            return nil
        }
        if cursor < names.count, names[cursor] == name { return cursor }
        return names.firstIndex(of: name)
    }

    override var count: Int { setSlots + otherKeys.count }

    override func object(forKey key: Any) -> Any? {
        guard let key = key as? AnyHashable else { return nil }
        if let index = slot(of: key) { return isSet[index] ? slotValues[index] : nil }
        return otherValues[key]
    }

    override func keyEnumerator() -> NSEnumerator {
        NSArray(array: allKeys).objectEnumerator()
    }

    override var allKeys: [Any] {
        names.indices.compactMap { isSet[$0] ? names[$0] : nil } + otherKeys.map(\.base)
    }

    override func setObject(_ object: Any, forKey key: AnyHashable) {
        if let index = slot(of: key) {
            if !isSet[index] { isSet[index] = true; setSlots += 1 }
            slotValues[index] = object
            cursor = index + 1
        } else {
            if otherValues.updateValue(object, forKey: key) == nil { otherKeys.append(key) }
        }
    }

    override func removeObject(forKey key: Any) {
        guard let key = key as? AnyHashable else { return }
        if let index = slot(of: key) {
            if isSet[index] { isSet[index] = false; setSlots -= 1 }
        } else if otherValues.removeValue(forKey: key) != nil {
            otherKeys.removeAll { $0 == key }
        }
    }

    override func removeAllObjects() {
        if setSlots > 0 {
            for index in isSet.indices { isSet[index] = false }
            setSlots = 0
        }
        if !otherKeys.isEmpty {
            otherKeys.removeAll()
            otherValues.removeAll()
        }
        cursor = 0
    }
}
#endif
