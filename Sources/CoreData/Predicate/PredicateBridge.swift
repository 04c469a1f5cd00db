import Foundation

// The entry points the context and the stores call. Everything here is internal.

/// From requests to trees and back to answers, for the context.
internal enum PredicateBridge {
    /// The parsed tree of a fetch request's predicate. Throws the parse error of a malformed
    /// format (`NSCocoaErrorDomain` 2048), or 134091 for a block predicate.
    static func tree(of predicate: NSPredicate) throws -> PredicateNode {
        try predicate.predicateTree()
    }

    /// The sort keys of a fetch request's sort descriptors. Throws (134091) for descriptors made
    /// from Swift key paths.
    static func sortKeys(of descriptors: [NSSortDescriptor]) throws -> [SortKey] {
        try descriptors.map { try $0.sortKey() }
    }

    /// Whether `object` matches, with the semantics the SQL store uses (``PredicateEvaluator``).
    static func evaluate(_ node: PredicateNode, on object: NSManagedObject, variables: [String: Any]? = nil) throws -> Bool {
        PredicateEvaluator.evaluate(node, object: object, variables: variables)
    }

    /// `objects` sorted by `keys` in the order the SQL store gives; a stable sort, so objects the
    /// keys do not tell apart keep their order. (Any objects whose keys ``PredicateKeyValue``
    /// reads: managed objects, history's transactions and changes.)
    static func sort<T>(_ objects: [T], by keys: [SortKey]) -> [T] {
        guard !keys.isEmpty else { return objects }
        return objects.enumerated().sorted { a, b in
            for key in keys {
                switch key.compare(a.element, b.element) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return a.offset < b.offset
        }.map(\.element)
    }
}

/// Predicates and sorts over store records (`[String: Any]` by property name, to-one
/// relationships as `NSManagedObjectID`, to-many ones as `[NSManagedObjectID]` or
/// `Set<NSManagedObjectID>`, the object's own ID under `"self"`), for the in-memory store.
/// Key paths through relationships (`owner.name`, `ANY cars.year > 2000`) need `resolve`, which
/// gives the record of a related object; without it a key path stops at the IDs.
internal enum InMemoryEvaluation {
    /// Whether the record matches. `SELF` is the record's `"self"` ID. Key paths through
    /// relationships are followed with `resolve` (the destination's record), or end at the IDs.
    static func matches(_ node: PredicateNode, record: [String: Any],
                        resolve: ((NSManagedObjectID) -> [String: Any]?)? = nil) throws -> Bool {
        PredicateEvaluator.evaluate(node, object: StoreRecordObject(record, resolve: resolve))
    }

    /// Whether record `a` sorts before `b` under `keys`; `tieBreak` when the keys do not tell them apart.
    static func orderedBefore(_ a: [String: Any], _ b: [String: Any], keys: [SortKey], tieBreak: Bool,
                              resolve: ((NSManagedObjectID) -> [String: Any]?)? = nil) -> Bool {
        let x = StoreRecordObject(a, resolve: resolve)
        let y = StoreRecordObject(b, resolve: resolve)
        for key in keys {
            switch key.compare(x, y) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return tieBreak
    }
}

/// Something predicates read keys from that is neither an `NSManagedObject` nor a dictionary.
internal protocol PredicateKeyValueCoding: AnyObject {
    /// The value for `key` (`nil` for none or unknown).
    func predicateValue(forKey key: String) -> Any?
    /// The ID the object stands for, which `==` compares with managed objects and IDs.
    var predicateObjectID: NSManagedObjectID? { get }
}

/// A store record seen as an object.
internal final class StoreRecordObject: PredicateKeyValueCoding {
    let record: [String: Any]
    let resolve: ((NSManagedObjectID) -> [String: Any]?)?

    init(_ record: [String: Any], resolve: ((NSManagedObjectID) -> [String: Any]?)?) {
        self.record = record
        self.resolve = resolve
    }

    func predicateValue(forKey key: String) -> Any? {
        let value = record[key]
        guard let resolve, let value else { return value }
        if let id = value as? NSManagedObjectID {
            return resolve(id).map { StoreRecordObject($0, resolve: resolve) } ?? id
        }
        if let ids = value as? [NSManagedObjectID] {
            return ids.map { id in resolve(id).map { StoreRecordObject($0, resolve: resolve) as Any } ?? id }
        }
        if let ids = value as? Set<NSManagedObjectID> {
            return ids.map { id in resolve(id).map { StoreRecordObject($0, resolve: resolve) as Any } ?? id }
        }
        return value
    }

    var predicateObjectID: NSManagedObjectID? { record["self"] as? NSManagedObjectID }
}
