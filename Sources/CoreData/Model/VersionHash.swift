import Foundation

/// Version hashes computed exactly as Apple's Core Data computes them, so that a store written by
/// Apple platforms (its `NSStoreModelVersionHashes` metadata) matches a model read on Linux, and so
/// that `versionChecksum` equals the checksum Xcode's model compiler prints.
///
/// Every hash is a SHA-256 over a byte string built from the description. Strings are UTF-8 with
/// no terminator, integers little-endian, and the parts in brackets appear only when present:
///
/// - property: `name`, `UInt16` flags (1 optional, 2 transient, 4 read-only), [`versionHashModifier`];
/// - attribute: property hash, `Int32` attribute type raw value, [`01` if it allows external
///   binary storage], [`01` if it preserves its value in history on deletion];
/// - composite attribute: its stored leaf elements' hashes (nested composites flattened) in
///   leaf-name order, and nothing of its own;
/// - derived attribute: its derivation's `predicateFormat` (a key path ending in `.@count`,
///   `.@sum` or `.@total` as Apple's setter rewrites it, `count:(posts)`, `sum:(posts.words)`),
///   and nothing of its own;
/// - relationship: property hash, [destination entity name], [inverse's name, when the inverse is
///   another relationship], `Int32` maxCount, `Int32` minCount, [`01 00` if ordered]. The delete
///   rule is not part of the hash;
/// - entity: `name`, `UInt8` isAbstract, [superentity's hash], the hashes of every non-transient
///   property (inherited ones included) in name order, [`versionHashModifier`], [each uniqueness
///   constraint's property names joined with ".", in ascending order];
/// - model checksum: base64 of the SHA-256 of the entity hashes concatenated in entity-name order;
/// - `NSStoreModelVersionHashesDigest`: base64 of the SHA-512 of name, hash, name, hash, … in
///   entity-name order.
///
/// Relationships read from Xcode's XML may know their destination and inverse only by name until
/// the model is frozen; the hashes use those names, so they are the same before and after.
internal enum VersionHash {
    /// The byte string a hash is computed over.
    private struct Bytes {
        var data = Data()
        mutating func string(_ value: String) { data.append(contentsOf: Array(value.utf8)) }
        mutating func uint8(_ value: UInt8) { data.append(value) }
        mutating func uint16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        mutating func int32(_ value: Int32) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        mutating func bytes(_ value: Data) { data.append(value) }
        var sha256: Data { SHA2.sha256(data) }
    }

    // MARK: Properties

    /// The hash shared by every property: name, flags and modifier.
    static func propertyHash(_ p: NSPropertyDescription) -> Data {
        var bytes = Bytes()
        bytes.string(p.name)
        var flags: UInt16 = 0
        if p.isOptional { flags |= 1 }
        if p.isTransient { flags |= 2 }
        if p.isReadOnly { flags |= 4 }
        bytes.uint16(flags)
        if let modifier = p.versionHashModifier, !modifier.isEmpty { bytes.string(modifier) }
        return bytes.sha256
    }

    static func attributeHash(_ a: NSAttributeDescription) -> Data {
        var bytes = Bytes()
        bytes.bytes(propertyHash(a))
        bytes.int32(Int32(truncatingIfNeeded: a.attributeType.rawValue))
        if a.allowsExternalBinaryDataStorage { bytes.uint8(1) }
        if a.preservesValueInHistoryOnDeletion { bytes.uint8(1) }
        return bytes.sha256
    }

    /// A composite attribute: the SHA-256 of the hashes of its stored leaf elements (nested
    /// composites flattened) in leaf-name order; Apple's computes its own attribute hash and
    /// leaves it out. (From the study of Apple's framework; not yet checked against a store
    /// Apple wrote.) `legacy`: the hash this package gave before session 37, with the composite's
    /// attribute hash first, which ``matches(_:_:)`` still accepts.
    static func compositeHash(_ c: NSCompositeAttributeDescription, legacy: Bool = false) -> Data {
        var leaves: [NSAttributeDescription] = []
        func collect(_ elements: [NSAttributeDescription]) {
            for element in elements {
                if let nested = element as? NSCompositeAttributeDescription { collect(nested.elements) } else if !element.isTransient { leaves.append(element) }
            }
        }
        collect(c.elements)
        var bytes = Bytes()
        if legacy { bytes.bytes(attributeHash(c)) }
        for leaf in leaves.sorted(by: { $0.name < $1.name }) { bytes.bytes(leaf.versionHash) }
        return bytes.sha256
    }

    /// A derived attribute: the SHA-256 of its derivation's format, as Apple's computes it (its
    /// name, flags and type are left out). Apple's `derivationExpression` setter turns a key
    /// path ending in `.@count` into `count:(path)` and one ending in `.@sum` or `.@total` into
    /// `sum:(path)`, and hashes that.
    static func derivedHash(_ d: NSDerivedAttributeDescription) -> Data {
        var bytes = Bytes()
        if let expression = d.derivationExpression {
            var node = expression.node
            if case .keyPath(let path) = node, path.count > 1 {
                let function = ["@count": "count:", "@sum": "sum:", "@total": "sum:"][path[path.count - 1]]
                if let function { node = .function(function, [.keyPath(Array(path.dropLast()))]) }
            }
            bytes.string(node.description)
        }
        return bytes.sha256
    }

    static func relationshipHash(_ r: NSRelationshipDescription) -> Data {
        var bytes = Bytes()
        bytes.bytes(propertyHash(r))
        let destinationName = r.destinationEntity?.name ?? r.destinationEntityName
        if let destinationName, !destinationName.isEmpty { bytes.string(destinationName) }
        if let inverseName = inverseNameForHash(r), !inverseName.isEmpty { bytes.string(inverseName) }
        bytes.int32(Int32(clamping: r.maxCount))
        bytes.int32(Int32(clamping: r.minCount))
        if r.isOrdered { bytes.uint8(1); bytes.uint8(0) }
        return bytes.sha256
    }

    /// The inverse's name, unless the relationship has no inverse or is its own inverse.
    private static func inverseNameForHash(_ r: NSRelationshipDescription) -> String? {
        if let inverse = r.inverseRelationship {
            return inverse === r ? nil : inverse.name
        }
        guard let name = r.inverseName else { return nil }
        // Known only by name: it is this relationship itself when it points back at its own entity under its own name.
        let destinationName = r.destinationEntity?.name ?? r.destinationEntityName
        if name == r.name, let ownEntity = r.entity?.name, destinationName == ownEntity { return nil }
        return name
    }

    // MARK: Entities and models

    static func entityHash(_ e: NSEntityDescription, legacy: Bool = false) -> Data {
        var bytes = Bytes()
        bytes.string(e.name ?? "")
        bytes.uint8(e.isAbstract ? 1 : 0)
        if let parent = e.superentity { bytes.bytes(entityHash(parent, legacy: legacy)) }
        let stored = e.properties
            .filter { !$0.isTransient && ($0 is NSAttributeDescription || $0 is NSRelationshipDescription) }
            .sorted { $0.name < $1.name }
        for property in stored {
            switch property {
            case let composite as NSCompositeAttributeDescription where legacy: bytes.bytes(compositeHash(composite, legacy: true))
            case let derived as NSDerivedAttributeDescription where legacy: bytes.bytes(attributeHash(derived))
            default: bytes.bytes(property.versionHash)
            }
        }
        if let modifier = e.versionHashModifier, !modifier.isEmpty { bytes.string(modifier) }
        for constraint in constraintStrings(e).sorted() { bytes.string(constraint) }
        return bytes.sha256
    }

    /// Whether `stored`, an entity's hash a store's metadata records, is `entity`'s: its
    /// ``entityHash(_:legacy:)``, or for an entity with composite or derived attributes the
    /// hash this package recorded for it before it hashed them as Apple does (so that stores it
    /// wrote then still open; ``SQLiteStore`` records the current hashes when it opens one).
    static func matches(_ stored: Data, _ entity: NSEntityDescription) -> Bool {
        if stored == entity.versionHash { return true }
        var hierarchy: NSEntityDescription? = entity
        var hasChangedKinds = false
        while let current = hierarchy, !hasChangedKinds {
            hasChangedKinds = current.properties.contains { $0 is NSCompositeAttributeDescription || $0 is NSDerivedAttributeDescription }
            hierarchy = current.superentity
        }
        return hasChangedKinds && stored == entityHash(entity, legacy: true)
    }

    /// Each uniqueness constraint as its property names joined with ".".
    private static func constraintStrings(_ e: NSEntityDescription) -> [String] {
        e.uniquenessConstraints.compactMap { constraint -> String? in
            let names = e.names(ofConstraint: constraint)
            return names.isEmpty ? nil : names.joined(separator: ".")
        }
    }

    /// The model's entities with names, in name order.
    private static func namedEntities(_ m: NSManagedObjectModel) -> [(name: String, entity: NSEntityDescription)] {
        m.entities.compactMap { entity in entity.name.map { ($0, entity) } }.sorted { $0.name < $1.name }
    }

    /// Xcode's "version checksum": base64 of the SHA-256 of the entity hashes in entity-name order.
    static func versionChecksum(_ m: NSManagedObjectModel) -> String {
        versionChecksum(entityHashes: m.entityVersionHashesByName)
    }

    /// The same checksum for the model whose entities have `hashes` (entity name to version hash),
    /// as a store's `NSStoreModelVersionHashes` metadata records them.
    static func versionChecksum(entityHashes hashes: [String: Data]) -> String {
        var bytes = Bytes()
        for (_, hash) in hashes.sorted(by: { $0.key < $1.key }) { bytes.bytes(hash) }
        return bytes.sha256.base64EncodedString()
    }

    /// The store metadata's `NSStoreModelVersionHashesDigest`: base64 of the SHA-512 of each
    /// entity's name followed by its hash, in entity-name order.
    static func hashesDigest(_ m: NSManagedObjectModel) -> String {
        var bytes = Bytes()
        for (name, entity) in namedEntities(m) {
            bytes.string(name)
            bytes.bytes(entity.versionHash)
        }
        return SHA2.sha512(bytes.data).base64EncodedString()
    }
}
