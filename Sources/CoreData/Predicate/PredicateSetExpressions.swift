import Foundation

// Foundation's set expressions (`NSExpression(forUnionSet:with:)`, `forIntersectSet`,
// `forMinusSet`), as function nodes of internal names: pure functions of two values, evaluated as
// the other functions are, and folded in a fetch when both operands are constants.

extension PredicateFunctions {
    /// The internal names of the set expressions, with the word their description prints between
    /// the operands. Not function names `NSExpression(forFunction:)` or a format accepts.
    static let setOperators: [String: String] = ["unionSet:with:": "UNION", "intersectSet:with:": "INTERSECT", "minusSet:with:": "MINUS"]

    /// A set expression's value, as Foundation computes it: `left`'s elements united with,
    /// intersected with, or less `right`'s, each element once (`left`'s order first), as an
    /// array. A right operand that is `nil` leaves `left` as it is; a dictionary stands for its
    /// values. Leniencies where Apple raises: a single value is a set of one, a `nil` left
    /// operand an empty set.
    static func setOperation(_ name: String, _ left: PredicateValue, _ right: PredicateValue) -> PredicateValue {
        let a = elements(left)
        guard !right.isNull else { return .collection(unique(a)) }
        let b = elements(right)
        switch name {
        case "unionSet:with:": return .collection(unique(a + b))
        case "intersectSet:with:":
            let members = Membership(b)
            return .collection(unique(a.filter { members.contains($0) }))
        default:
            let members = Membership(b)
            return .collection(unique(a.filter { !members.contains($0) }))
        }
    }

    private static func elements(_ value: PredicateValue) -> [PredicateValue] {
        switch value {
        case .null: return []
        case .collection(let items): return items
        case .other(let box):
            if let dictionary = box.value as? [AnyHashable: Any] { return dictionary.values.map { PredicateValue($0) } }
            if let dictionary = box.value as? NSDictionary { return dictionary.allValues.map { PredicateValue($0) } }
            return [value]
        default: return [value]
        }
    }

    /// `items` with each element once, in order.
    private static func unique(_ items: [PredicateValue]) -> [PredicateValue] {
        var seen = Membership([])
        return items.filter { item in
            guard !seen.contains(item) else { return false }
            seen.insert(item)
            return true
        }
    }

    /// Whether a value is among some values, as `PredicateValue.equal` says: numbers, strings,
    /// dates, UUIDs and objects by a hashed key (a set of thousands costs no more than its size),
    /// other values by comparing with each.
    private struct Membership {
        private var keys: Set<AnyHashable> = []
        private var others: [PredicateValue] = []

        init(_ values: [PredicateValue]) { for value in values { insert(value) } }

        /// The hashed key of a value whose equality is plain (`1` and `1.0` share one; an object
        /// and its ID share its ID).
        private static func key(_ value: PredicateValue) -> AnyHashable? {
            switch value {
            case .int(let v): return Double(exactly: v).map(AnyHashable.init) ?? AnyHashable(v)
            case .double(let v) where !v.isNaN: return AnyHashable(v)
            case .string(let v): return AnyHashable(Array(v.utf8)) // (literal, as NSSet: not canonical equivalence)
            case .date(let v): return AnyHashable(v)
            case .uuid(let v): return AnyHashable(v)
            case .objectID(let reference), .object(let reference):
                if let id = reference.object as? NSManagedObjectID { return AnyHashable(id) }
                if let object = reference.object as? NSManagedObject { return AnyHashable(object.objectID) }
                // (A store's row as an in-memory store evaluates it: its object's ID.)
                if let record = reference.object as? PredicateKeyValueCoding, let id = record.predicateObjectID { return AnyHashable(id) }
                return nil
            default: return nil
            }
        }

        mutating func insert(_ value: PredicateValue) {
            if let key = Self.key(value) { keys.insert(key) } else { others.append(value) }
        }

        func contains(_ value: PredicateValue) -> Bool {
            if let key = Self.key(value) { return keys.contains(key) }
            return others.contains { PredicateValue.equal($0, value) }
        }
    }
}
