import Foundation

/// One object of an ``NSAtomicStore``, as the store holds it in memory: its ID and its values.
///
/// ```swift
/// let node = NSAtomicStoreCacheNode(objectID: objectID(for: entity, withReferenceObject: "note-1"))
/// node.setValue("Groceries", forKey: "title")
/// addCacheNodes([node])
/// ```
///
/// The values are keyed by property name: attributes hold their values; a to-one relationship
/// holds the related object's cache node; a to-many one a set (or, ordered, an ordered set or
/// array) of cache nodes.
open class NSAtomicStoreCacheNode: NSObject {
    /// The ID of the object the node holds.
    ///
    /// ```swift
    /// let key = store.referenceObject(for: node.objectID)
    /// ```
    public let objectID: NSManagedObjectID
    /// The node's values by property name; made on the first ``setValue(_:forKey:)`` when `nil`.
    ///
    /// ```swift
    /// node.propertyCache = NSMutableDictionary(dictionary: ["title": "Groceries"])
    /// ```
    open var propertyCache: NSMutableDictionary?

    /// A node for the object `objectID` names, with no values yet.
    ///
    /// ```swift
    /// let node = NSAtomicStoreCacheNode(objectID: id)
    /// ```
    public init(objectID moid: NSManagedObjectID) {
        self.objectID = moid
        super.init()
    }

    /// The value of the property named `key`, or `nil`.
    ///
    /// ```swift
    /// let title = node.value(forKey: "title") as? String
    /// ```
    open func value(forKey key: String) -> Any? {
        guard let value = propertyCache?[key], !StoreValue.isNull(value) else { return nil }
        return value
    }

    /// Sets the value of the property named `key` (`nil` removes it).
    ///
    /// ```swift
    /// node.setValue(ownerNode, forKey: "owner")
    /// ```
    open func setValue(_ value: Any?, forKey key: String) {
        if propertyCache == nil { propertyCache = NSMutableDictionary() }
        if let value { propertyCache![key] = value } else { propertyCache!.removeObject(forKey: key) }
    }
}
