import Foundation

/// An attribute whose value Core Data derives from other values when the object is saved:
/// a copy of a value through to-one relationships (`author.name`), a string function of one
/// (`canonical:(name)`, `lowercase:(title)`, `uppercase:(title)`), a count or sum over a
/// to-many relationship (`posts.@count`, `posts.words.@sum`), or the time of the save (`now()`).
///
/// ```swift
/// let postCount = NSDerivedAttributeDescription()
/// postCount.name = "postCount"
/// postCount.attributeType = .integer64AttributeType
/// postCount.derivationExpression = NSExpression(format: "posts.@count")
/// ```
///
/// As on Apple platforms, the value is recomputed when the object's context saves to the store
/// (not when a child context saves into its parent), stored in its column, and from then on
/// read, fetched, sorted and matched by predicates like any attribute; before that save the
/// object shows its old value. A save recomputes the derived values of the objects it writes,
/// and of the objects whose derived values depend on what it writes (the author whose post was
/// added or whose posts' words changed, the posts of an author who was renamed), found through
/// the inverse relationships; an object whose derived value changes is written too. A value set
/// by the app is replaced at the save. `now()` is the save's time, for every object the save
/// writes.
///
/// Linux difference: Apple's SQLite store computes the values with triggers in the store file;
/// here the saving context computes them, so both stores agree. An object whose derived value
/// changes only because another object changed is saved as an update (its version rises and the
/// did-save notification lists it), where Apple's trigger changes its row silently; and a
/// derivation through a relationship without an inverse is recomputed only when its own object
/// is saved. Batch requests, which write rows without objects, leave the computing to the store,
/// in their transaction (`BatchDerivedAttributes.swift`).
///
/// ``versionHash`` is Apple's: the SHA-256 of the derivation's format alone (`count:(posts)` for
/// `posts.@count`), so a store Apple wrote opens here. A derivation that stores cannot compute (another function,
/// a to-many key path without `@count` or `@sum`, a key that is not a property, a value of
/// another type) makes `addPersistentStore` throw, as on Apple platforms.
open class NSDerivedAttributeDescription: NSAttributeDescription, @unchecked Sendable {
    /// How the value is derived: a key path, a key path with `@count` or `@sum`, one of the
    /// functions `canonical:`, `lowercase:`, `uppercase:` of a key path, or `now()`.
    ///
    /// ```swift
    /// searchName.derivationExpression = NSExpression(format: "canonical:(name)")
    /// ```
    open var derivationExpression: NSExpression? { willSet { assertMutable() } }

    /// An empty derived attribute: set its name, type and ``derivationExpression``.
    public required init() { super.init() }

    /// The attribute's hash, as Apple's computes it: the SHA-256 of its derivation's format
    /// (`count:(posts)` for `posts.@count`, `canonical:(name)`), without its name, flags or
    /// type.
    open override var versionHash: Data { VersionHash.derivedHash(self) }

    /// A copy of the attribute with its ``derivationExpression``, in no entity.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = super.copy(with: zone) as! NSDerivedAttributeDescription
        copy.derivationExpression = derivationExpression
        return copy
    }

    /// The derivation, made when the model freezes; `nil` if ``derivationProblem`` says why not.
    internal private(set) var derivation: Derivation?
    /// Why the expression cannot be derived, when the model froze (reported by `addPersistentStore`).
    internal private(set) var derivationProblem: String?

    /// Makes ``derivation`` (or notes ``derivationProblem``): once, when the model freezes,
    /// after every property has its index.
    internal func prepareDerivation() {
        do {
            derivation = try Derivation(for: self)
        } catch {
            derivationProblem = "The derived attribute '\(entity?.name ?? "").\(name)' cannot be computed: \(error.reason)"
        }
    }
}

/// A derived attribute's expression, resolved against the model: the relationships it follows
/// and the value it reads. Made when the model freezes (``NSDerivedAttributeDescription/prepareDerivation()``).
internal enum Derivation {
    /// The string functions a derivation may apply to a value.
    enum StringFunction: String {
        case canonical = "canonical:", lowercase = "lowercase:", uppercase = "uppercase:"
    }

    /// The value of `attribute` at the end of the to-one relationships `path`, through
    /// `function` if any: `name`, `author.name`, `canonical:(name)`.
    case value(path: [NSRelationshipDescription], attribute: NSAttributeDescription, function: StringFunction?)
    /// The number of objects in the to-many `relationship` at the end of the to-ones `path`
    /// (`posts.@count`), or the sum of their `summed` attribute (`posts.words.@sum`).
    case aggregate(path: [NSRelationshipDescription], relationship: NSRelationshipDescription, summed: NSAttributeDescription?)
    /// `now()`: the time of the save.
    case now

    struct Problem: Error { let reason: String }

    init(for attribute: NSDerivedAttributeDescription) throws(Problem) {
        guard let expression = attribute.derivationExpression else { throw Problem(reason: "it has no derivation expression") }
        guard let entity = attribute.entity else { throw Problem(reason: "it belongs to no entity") }
        guard !attribute.isTransient else { throw Problem(reason: "it is transient, and a derived value is stored") }
        let type = attribute.attributeType
        switch expression.node {
        case .function("now", let arguments) where arguments.isEmpty:
            guard type == .dateAttributeType else { throw Problem(reason: "now() gives a date, and the attribute is not a Date") }
            self = .now
        case .function(let name, let arguments):
            guard let function = StringFunction(rawValue: name), arguments.count == 1, case .keyPath(let keys) = arguments[0] else {
                throw Problem(reason: "'\(expression.node)' is not one of the derivations stores compute (a key path, canonical:, lowercase: or uppercase: of a key path, @count or @sum of a to-many key path, now())")
            }
            if keys.contains(where: { $0.hasPrefix("@") }) {
                throw Problem(reason: "\(name) takes a string value, not '\(keys.joined(separator: "."))'")
            }
            let (path, source) = try Self.valuePath(keys, from: entity)
            guard source.attributeType == .stringAttributeType, type == .stringAttributeType else {
                throw Problem(reason: "\(name) takes and gives strings, and '\(keys.joined(separator: "."))' or the attribute is not a String")
            }
            self = .value(path: path, attribute: source, function: function)
        case .keyPath(let keys):
            if let aggregate = try Self.aggregate(keys, from: entity, type: type) {
                self = aggregate
            } else {
                let (path, source) = try Self.valuePath(keys, from: entity)
                guard source !== attribute else { throw Problem(reason: "it derives from itself") }
                guard Self.compatible(source.attributeType, type) else {
                    throw Problem(reason: "'\(keys.joined(separator: "."))' is of another type than the attribute")
                }
                self = .value(path: path, attribute: source, function: nil)
            }
        default:
            throw Problem(reason: "'\(expression.node)' is not one of the derivations stores compute (a key path, canonical:, lowercase: or uppercase: of a key path, @count or @sum of a to-many key path, now())")
        }
    }

    /// The to-one relationships and the attribute of a key path such as `author.name`.
    private static func valuePath(_ keys: [String], from entity: NSEntityDescription) throws(Problem) -> ([NSRelationshipDescription], NSAttributeDescription) {
        var path: [NSRelationshipDescription] = []
        var current = entity
        for (offset, key) in keys.enumerated() {
            switch current.propertiesByName[key] {
            case let attribute as NSAttributeDescription where offset == keys.count - 1:
                guard !attribute.isTransient else { throw Problem(reason: "'\(key)' is transient: it has no stored value") }
                return (path, attribute)
            case let relationship as NSRelationshipDescription where !relationship.isToMany && offset < keys.count - 1:
                guard let destination = relationship.destinationEntity else { throw Problem(reason: "'\(key)' has no destination entity") }
                path.append(relationship)
                current = destination
            case let relationship as NSRelationshipDescription where relationship.isToMany:
                throw Problem(reason: "'\(keys.joined(separator: "."))' goes through the to-many relationship '\(key)' without @count or @sum")
            default:
                throw Problem(reason: "'\(keys.joined(separator: "."))' does not lead to an attribute ('\(key)' of the entity '\(current.name ?? "")')")
            }
        }
        throw Problem(reason: "the key path is empty")
    }

    /// `posts.@count`, `posts.@sum.words` or `posts.words.@sum` (after to-ones), or `nil` for a
    /// key path with no `@` operator.
    private static func aggregate(_ keys: [String], from entity: NSEntityDescription, type: NSAttributeType) throws(Problem) -> Derivation? {
        guard let operatorOffset = keys.firstIndex(where: { $0.hasPrefix("@") }) else { return nil }
        let written = keys.joined(separator: ".")
        let op = keys[operatorOffset].lowercased()
        guard op == "@count" || op == "@sum" else { throw Problem(reason: "'\(written)': only @count and @sum are computed by stores") }
        var keysToMany = Array(keys[..<operatorOffset])
        var summedKey: String?
        if op == "@sum" {
            // `posts.@sum.words`, or `posts.words.@sum` as Xcode's editor accepts it.
            if operatorOffset == keys.count - 2 { summedKey = keys.last }
            else if operatorOffset == keys.count - 1, keysToMany.count >= 2 { summedKey = keysToMany.removeLast() }
            guard summedKey != nil else { throw Problem(reason: "'\(written)': @sum needs one attribute of the to-many relationship's entity") }
        } else {
            guard operatorOffset == keys.count - 1 else { throw Problem(reason: "'\(written)': nothing may follow @count") }
        }
        guard let last = keysToMany.popLast() else { throw Problem(reason: "'\(written)': \(op) needs a to-many relationship before it") }
        var path: [NSRelationshipDescription] = []
        var current = entity
        for key in keysToMany {
            guard let relationship = current.propertiesByName[key] as? NSRelationshipDescription, !relationship.isToMany,
                  let destination = relationship.destinationEntity else {
                throw Problem(reason: "'\(written)': '\(key)' is not a to-one relationship of the entity '\(current.name ?? "")'")
            }
            path.append(relationship)
            current = destination
        }
        guard let relationship = current.propertiesByName[last] as? NSRelationshipDescription, relationship.isToMany,
              !relationship.isTransient, let destination = relationship.destinationEntity else {
            throw Problem(reason: "'\(written)': '\(last)' is not a to-many relationship of the entity '\(current.name ?? "")'")
        }
        guard isNumber(type) else { throw Problem(reason: "'\(written)' gives a number, and the attribute is not a number") }
        var summed: NSAttributeDescription?
        if let summedKey {
            guard let attribute = destination.propertiesByName[summedKey] as? NSAttributeDescription, isNumber(attribute.attributeType),
                  !attribute.isTransient else {
                throw Problem(reason: "'\(written)': '\(summedKey)' is not a stored number attribute of the entity '\(destination.name ?? "")'")
            }
            summed = attribute
        }
        return .aggregate(path: path, relationship: relationship, summed: summed)
    }

    private static func isNumber(_ type: NSAttributeType) -> Bool {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .decimalAttributeType,
             .doubleAttributeType, .floatAttributeType: return true
        default: return false
        }
    }

    /// Whether a value of type `source` is stored as is in an attribute of type `target`
    /// (numbers of any kind into numbers; other types into the same type).
    private static func compatible(_ source: NSAttributeType, _ target: NSAttributeType) -> Bool {
        source == target || (isNumber(source) && isNumber(target))
    }

    /// The relationships from the derived attribute's entity to the values it reads, in order:
    /// a change to an object at the end of one of them may change the derived value.
    var relationships: [NSRelationshipDescription] {
        switch self {
        case .value(let path, _, _): return path
        case .aggregate(let path, let relationship, _): return path + [relationship]
        case .now: return []
        }
    }

    /// The attribute whose value the derivation reads (the copied or the summed one), if any.
    var readAttribute: NSAttributeDescription? {
        switch self {
        case .value(_, let attribute, _): return attribute
        case .aggregate(_, _, let summed): return summed
        case .now: return nil
        }
    }

    /// The derivation as an expression in one spelling (`posts.@sum.words` for Xcode's
    /// `posts.words.@sum`), for the stores' SQL; `nil` for `now()`.
    var expression: ExpressionNode? {
        switch self {
        case .value(let path, let attribute, let function):
            let keyPath = ExpressionNode.keyPath(path.map(\.name) + [attribute.name])
            return function.map { .function($0.rawValue, [keyPath]) } ?? keyPath
        case .aggregate(let path, let relationship, let summed):
            let keys = path.map(\.name) + [relationship.name]
            return .keyPath(summed.map { keys + ["@sum", $0.name] } ?? keys + ["@count"])
        case .now:
            return nil
        }
    }

    /// What an aggregate derivation gives: the sum of `summed` (the members' values of the summed
    /// attribute), or `count` when it sums nothing.
    static func aggregateValue(count: Int, summed: [Any?]?) -> Any? {
        guard let summed else { return count }
        return PredicateFunctions.statistic("sum:", .collection(summed.map { PredicateValue($0) })).walkable
    }

    /// A derived `value` as `attribute` stores it; throws for a value its type cannot hold
    /// (`nothing` says what was then left undone).
    static func stored(_ value: Any?, for attribute: NSDerivedAttributeDescription, nothing: String) throws -> StoreValue {
        guard let value else { return .null }
        guard let stored = StoreValue.storage(of: value, for: attribute.attributeType) else {
            throw CoreDataError.make(.persistentStoreSave,
                "The derived attribute '\(attribute.entity?.name ?? "").\(attribute.name)' computed a \(type(of: value)), which its type cannot hold; \(nothing)")
        }
        return stored
    }

    /// Whether the derivation reads rows of the table of `root` (a root entity) other than its
    /// own object's row: rows its relationships lead to.
    func readsRelatedRows(of root: NSEntityDescription) -> Bool {
        relationships.contains { $0.destinationEntity?.rootEntity === root }
    }

    /// The property whose change, on an object reached through `relationships[hop]`, may
    /// change the derived value: the next relationship, or the attribute read.
    func property(after hop: Int) -> NSPropertyDescription? {
        let relationships = self.relationships
        if hop + 1 < relationships.count { return relationships[hop + 1] }
        switch self {
        case .value(_, let attribute, _): return attribute
        case .aggregate(_, _, let summed): return summed
        case .now: return nil
        }
    }
}
