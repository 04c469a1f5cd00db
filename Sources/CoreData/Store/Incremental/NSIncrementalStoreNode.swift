import Foundation

/// One record of an ``NSIncrementalStore``: an object's persisted values and its version, as
/// the store's ``NSIncrementalStore/newValuesForObject(with:with:)`` returns them.
///
/// ```swift
/// override func newValuesForObject(with objectID: NSManagedObjectID,
///                                  with context: NSManagedObjectContext) throws -> NSIncrementalStoreNode {
///     let record = records[referenceObject(for: objectID) as! String]!
///     return NSIncrementalStoreNode(objectID: objectID,
///                                   withValues: ["name": record.name, "owner": record.ownerID ?? NSNull()],
///                                   version: record.version)
/// }
/// ```
///
/// The values are keyed by property name:
/// - attributes: their values (`String`, `NSNumber`, `Int`, `Date`, `Data`, …); a missing key is `nil`;
/// - to-one relationships: the related object's ``NSManagedObjectID``, or `NSNull` for none; a
///   missing key is asked of ``NSIncrementalStore/newValue(forRelationship:forObjectWith:with:)``;
/// - to-many relationships: an array or set of object IDs; a missing key is asked of
///   ``NSIncrementalStore/newValue(forRelationship:forObjectWith:with:)`` when the relationship is read.
///
/// The `version` is the record's optimistic-locking version (Core Data's `Z_OPT`): a save of an
/// object whose record has another version than the one its context read meets a merge
/// conflict. A store that adds one at each save of a record detects other writers' changes; a
/// store that keeps one version never conflicts (after a save the context takes each saved
/// object's version from its node again).
open class NSIncrementalStoreNode: NSObject {
    /// The ID of the object whose values the node holds.
    ///
    /// ```swift
    /// let key = store.referenceObject(for: node.objectID)
    /// ```
    open private(set) var objectID: NSManagedObjectID
    /// The record's optimistic-locking version.
    ///
    /// ```swift
    /// if node.version != expected { /* someone else saved it */ }
    /// ```
    open private(set) var version: UInt64
    /// The values by property name (see the type's discussion).
    internal private(set) var values: [String: Any]

    /// A node for `objectID` holding `values` (by property name) at `version`.
    ///
    /// ```swift
    /// NSIncrementalStoreNode(objectID: id, withValues: ["title": "Dune"], version: 1)
    /// ```
    public init(objectID: NSManagedObjectID, withValues values: [String: Any], version: UInt64) {
        self.objectID = objectID
        self.values = values
        self.version = version
        super.init()
    }

    /// Replaces the node's values and version (a store that keeps its nodes updates them in place).
    ///
    /// ```swift
    /// node.update(withValues: ["title": "Dune Messiah"], version: node.version + 1)
    /// ```
    open func update(withValues values: [String: Any], version: UInt64) {
        self.values = values
        self.version = version
    }

    /// The value of `prop`: `nil` when the node has no value for it (or holds `NSNull`).
    ///
    /// ```swift
    /// let title = node.value(for: entity.propertiesByName["title"]!) as? String
    /// ```
    open func value(for prop: NSPropertyDescription) -> Any? {
        guard let value = values[prop.name], !StoreValue.isNull(value) else { return nil }
        return value
    }
}
