import CoreData
import Foundation

// An atomic store written the way an app writes one for Apple's Core Data, with the public API
// only (no @testable import): its file is a JSON document of the metadata (a property list) and one record per
// object (attributes that JSON holds, to-ones and to-manys as references). `save()` writes the
// whole file, `load()` reads it back into cache nodes.

/// An `NSAtomicStore` in a JSON file.
final class JSONFileStore: NSAtomicStore, @unchecked Sendable {
    static let storeType = "JSONFileStore"
    /// Thrown by the next `save()`, before it writes (for the tests).
    var failNextSave: NSError?
    var saves = 0

    static func register() {
        NSPersistentStoreCoordinator.registerStoreClass(JSONFileStore.self, forStoreType: storeType)
    }

    override func load() throws {
        guard let url, let data = try? Data(contentsOf: url), !data.isEmpty else {
            metadata = [NSStoreTypeKey: Self.storeType, NSStoreUUIDKey: UUID().uuidString]
            return
        }
        let document = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        metadata = try Self.decodeMetadata(document["metadata"])
        let model = persistentStoreCoordinator!.managedObjectModel
        let records = document["records"] as! [[String: Any]]
        var nodes: [String: NSAtomicStoreCacheNode] = [:]
        for record in records {
            let key = record["key"] as! String
            let entity = model.entitiesByName[record["entity"] as! String]!
            nodes[key] = NSAtomicStoreCacheNode(objectID: objectID(for: entity, withReferenceObject: key))
        }
        for record in records {
            let node = nodes[record["key"] as! String]!
            for (name, value) in record["attributes"] as! [String: Any] { node.setValue(value, forKey: name) }
            for (name, key) in record["toOne"] as! [String: String] { node.setValue(nodes[key], forKey: name) }
            for (name, keys) in record["toMany"] as! [String: [String]] {
                let members = keys.compactMap { nodes[$0] }
                let relationship = node.objectID.entity.relationshipsByName[name]!
                node.setValue(relationship.isOrdered ? members as Any : Set(members) as Any, forKey: name)
            }
        }
        addCacheNodes(Set(nodes.values))
    }

    /// The lifecycle calls the store received, in order (for the tests).
    var lifecycle: [String] = []

    override func didAdd(to coordinator: NSPersistentStoreCoordinator) { lifecycle.append("didAdd") }

    override func willRemove(from coordinator: NSPersistentStoreCoordinator?) { lifecycle.append("willRemove") }

    /// The metadata of the file at `url`, read without adding the store.
    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        return try decodeMetadata(document?["metadata"]) ?? [:]
    }

    /// The metadata as the file holds it: a property list (it has `Data` values, the model's
    /// version hashes, which JSON can't hold), base-64 encoded.
    static func encodeMetadata(_ metadata: [String: Any]?) throws -> String {
        try PropertyListSerialization.data(fromPropertyList: metadata ?? [:], format: .binary, options: 0).base64EncodedString()
    }

    static func decodeMetadata(_ value: Any?) throws -> [String: Any]? {
        guard let text = value as? String, let data = Data(base64Encoded: text) else { return nil }
        return try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
    }

    /// Replaces the metadata in the file at `url`, keeping its records.
    override class func setMetadata(_ metadata: [String: Any]?, forPersistentStoreAt url: URL) throws {
        var document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        document["metadata"] = try encodeMetadata(metadata)
        try JSONSerialization.data(withJSONObject: document).write(to: url, options: .atomic)
    }

    /// How a new object's reference object is made (a UUID by default; a test sets another).
    var referenceObject: (NSManagedObject) -> Any = { _ in UUID().uuidString }

    override func newReferenceObject(for managedObject: NSManagedObject) -> Any { referenceObject(managedObject) }

    override func save() throws {
        if let failure = failNextSave {
            failNextSave = nil
            throw failure
        }
        saves += 1
        var records: [[String: Any]] = []
        for node in cacheNodes() {
            var attributes: [String: Any] = [:], toOne: [String: String] = [:], toMany: [String: [String]] = [:]
            for (name, property) in node.objectID.entity.propertiesByName {
                guard let value = node.value(forKey: name) else { continue }
                if let relationship = property as? NSRelationshipDescription {
                    if !relationship.isToMany, let target = value as? NSAtomicStoreCacheNode {
                        toOne[name] = referenceObject(for: target.objectID) as? String
                    } else {
                        let members = (value as? [NSAtomicStoreCacheNode]) ?? ((value as? Set<NSAtomicStoreCacheNode>).map { Array($0) } ?? [])
                        toMany[name] = members.map { referenceObject(for: $0.objectID) as! String }
                    }
                } else if value is String || value is NSNumber || value is Int || value is Double || value is Bool {
                    attributes[name] = value
                }
            }
            records.append(["key": referenceObject(for: node.objectID) as! String, "entity": node.objectID.entity.name!,
                            "attributes": attributes, "toOne": toOne, "toMany": toMany])
        }
        let document: [String: Any] = ["metadata": try Self.encodeMetadata(metadata), "records": records]
        try JSONSerialization.data(withJSONObject: document).write(to: url!, options: .atomic)
    }
}
