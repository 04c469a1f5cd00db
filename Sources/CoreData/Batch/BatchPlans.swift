import Foundation

// What the context hands the coordinator, and the coordinator each store, for a batch request:
// entities, property indexes, predicate trees and store values, checked against the model
// before any store writes (so both stores refuse the same input the same way).

/// What a store did for a batch request: how many rows, and their keys if asked for.
internal struct BatchOutcome: Sendable {
    var count = 0
    /// The rows' entities and keys, in order (only when the request asked for IDs).
    var keys: [FetchedKey] = []
}


/// A batch insert for one store.
internal struct BatchInsert {
    let entity: NSEntityDescription
    let wantsKeys: Bool
    /// The rows, read one at a time.
    let rows: BatchInsertRows
    /// What persistent history records of the executing context.
    var author = HistoryAuthor()
}

/// A batch update for one or more stores.
internal struct BatchUpdate {
    /// A new value: a constant, or an expression evaluated on each row.
    enum Value {
        case constant(StoreValue)
        case expression(ExpressionNode)
    }
    let plan: FetchPlan
    /// Attribute indexes and their new values, in a fixed order.
    let assignments: [(index: Int, value: Value)]
    let wantsKeys: Bool
    /// What persistent history records of the executing context.
    var author = HistoryAuthor()
    /// The request's time: the value of the updated rows' `now()` derived attributes.
    let date = Date()

    /// What the request does, for the derived attributes that read what it changes.
    var change: BatchChange {
        .update(assignments.compactMap { plan.entity.layout.properties[$0.index] as? NSAttributeDescription })
    }

    /// The request checked against the model: every key an attribute of the entity that a
    /// batch may set, every constant of the attribute's type.
    init(_ request: NSBatchUpdateRequest, entity: NSEntityDescription) throws {
        var plan = FetchPlan(entity: entity)
        plan.includesSubentities = request.includesSubentities
        plan.predicate = try request.predicate.map { try PredicateBridge.tree(of: $0).runningFetchRequestExpressions() }
        if let predicate = plan.predicate { try BatchKeyPaths.check(predicate, in: entity) }
        self.plan = plan
        wantsKeys = request.resultType == .updatedObjectIDsResultType
        var assignments: [(index: Int, value: Value)] = []
        for (key, raw) in request.propertiesToUpdate ?? [:] {
            let name = (key.base as? String) ?? (key.base as? NSPropertyDescription).map(entity.qualifiedName(of:)) ?? "\(key.base)"
            if let leaves = try Self.compositeAssignments(name, raw, entity: entity) {
                assignments += leaves
                continue
            }
            guard let index = entity.layout.nameTable.index(of: name) else {
                throw BatchErrors.invalid("NSBatchUpdateRequest: \(entity.name ?? "") has no attribute '\(name)'", key: name)
            }
            guard let attribute = entity.layout.properties[index] as? NSAttributeDescription, attribute.isStoredInRow else {
                throw BatchErrors.invalid("NSBatchUpdateRequest: '\(name)' of \(entity.name ?? "") is not a stored attribute; batch updates set attributes only", key: name)
            }
            guard !(attribute is NSDerivedAttributeDescription) else {
                // Its value is its derivation's: a value set here would stay until a source changed.
                throw BatchErrors.invalid("NSBatchUpdateRequest: '\(name)' of \(entity.name ?? "") is a derived attribute, computed from its derivation; batch updates do not set it", key: name)
            }
            guard !attribute.storesExternally else {
                throw BatchErrors.invalid("NSBatchUpdateRequest: '\(name)' of \(entity.name ?? "") is kept in external storage, which batch updates do not set", key: name)
            }
            if let expression = raw as? NSExpression, expression.expressionType != .constantValue {
                try BatchKeyPaths.check(expression.node, in: entity)
                if BatchKeyPaths.readsRelationship(expression.node, of: entity) {
                    // (Every store alike: SQL has no join in an UPDATE's values.)
                    throw BatchErrors.invalid("NSBatchUpdateRequest: new values may read the row's own attributes only, not key paths through relationships", key: name)
                }
                let node = try expression.node.runningFetchRequestExpressions()
                if case .constant(let value) = node { // a FETCH(…)'s value, checked as a constant is
                    assignments.append((index, .constant(try BatchErrors.storeValue(value.walkable, for: attribute, row: nil))))
                } else {
                    assignments.append((index, .expression(node)))
                }
            } else {
                // A constant expression of nil (`NSExpression(forConstantValue: nil)`) clears the attribute.
                let constant: Any = (raw as? NSExpression).map { $0.constantValue ?? NSNull() } ?? raw
                assignments.append((index, .constant(try BatchErrors.storeValue(constant, for: attribute, row: nil))))
            }
        }
        guard !assignments.isEmpty else {
            throw BatchErrors.invalid("NSBatchUpdateRequest: propertiesToUpdate is empty", key: nil)
        }
        self.assignments = assignments.sorted { $0.index < $1.index }
    }

    /// The assignments of a composite attribute set whole (`address`), or of a nested one
    /// (`address.geo`): each leaf takes its value in the dictionary given (`nil` when missing);
    /// `nil` when `name` names no composite.
    private static func compositeAssignments(_ name: String, _ raw: Any, entity: NSEntityDescription) throws -> [(index: Int, value: Value)]? {
        let path = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let composite = entity.propertiesByName[path[0]] as? NSCompositeAttributeDescription,
              path.count == 1 || composite.leaf(named: name) == nil else { return nil }
        guard let elements = CompositeValues.elements(of: composite, at: path) else {
            throw BatchErrors.invalid("NSBatchUpdateRequest: the composite '\(path[0])' of \(entity.name ?? "") has no element '\(path.dropFirst().joined(separator: "."))'", key: name)
        }
        var value = raw
        if let expression = raw as? NSExpression {
            guard expression.expressionType == .constantValue else {
                throw BatchErrors.invalid("NSBatchUpdateRequest: '\(name)' of \(entity.name ?? "") is a composite: it takes a dictionary of its elements, not an expression", key: name)
            }
            value = expression.constantValue ?? NSNull()
        }
        var dictionary: [String: Any] = [:]
        if !(value is NSNull) {
            guard let checked = CompositeValues.dictionary(value, of: elements) else {
                throw BatchErrors.invalid("NSBatchUpdateRequest: the value of '\(name)' of \(entity.name ?? "") is not a dictionary of its elements (\(elements.map(\.name).sorted().joined(separator: ", ")))", key: name)
            }
            dictionary = checked
        }
        return try composite.leaves.filter { $0.elementPath.starts(with: path) && !$0.isTransient }.map { leaf in
            let leafValue = CompositeValues.value(in: dictionary, at: leaf.elementPath[path.count...])
            return (leaf.index, .constant(try BatchErrors.storeValue(leafValue, for: leaf, row: nil)))
        }
    }
}

/// A batch delete for one or more stores.
internal struct BatchDelete {
    let plan: FetchPlan
    let wantsKeys: Bool
    /// What persistent history records of the executing context.
    var author = HistoryAuthor()
}

/// The context that executed a batch request, as persistent history records it with the
/// request's transaction (as with a save): its ``NSManagedObjectContext/transactionAuthor`` and
/// ``NSManagedObjectContext/name``.
internal struct HistoryAuthor {
    var transactionAuthor: String?
    var contextName: String?

    init(transactionAuthor: String? = nil, contextName: String? = nil) {
        self.transactionAuthor = transactionAuthor
        self.contextName = contextName
    }

    init(of context: NSManagedObjectContext) {
        self.init(transactionAuthor: context.transactionAuthor, contextName: context.name)
    }
}

/// The errors of batch requests.
internal enum BatchErrors {
    /// `NSManagedObjectValidationError` (1550) naming the key (and the row, in the message).
    static func invalid(_ message: String, key: String?, row: Int? = nil) -> NSError {
        var extra: [String: Any] = [:]
        if let key { extra[NSValidationKeyErrorKey] = key }
        if let row { extra["row"] = row }
        return CoreDataError.make(.managedObjectValidation, message, extra: extra)
    }

    /// `value` as `attribute` stores it: `.null` for `nil` or `NSNull`; throws 1550 for a value
    /// of another type.
    static func storeValue(_ value: Any?, for attribute: NSAttributeDescription, row: Int?) throws -> StoreValue {
        guard let value, !(value is NSNull) else { return .null }
        if let stored = StoreValue.storage(of: value, for: attribute.attributeType) { return stored }
        let at = row.map { "row \($0): " } ?? ""
        throw invalid("\(at)the value \(value) (\(type(of: value))) of '\(attribute.name)' is not of \(attribute.entity?.name ?? "").\(attribute.name)'s type (\(attribute.attributeType))",
                      key: attribute.name, row: row)
    }
}

/// Checks the key paths of a batch request's predicate and expressions against its entity, so
/// that both stores refuse a key the entity does not have before anything is written (the
/// SQLite store's compiler would; the in-memory store's evaluator reads such a key as nil).
internal enum BatchKeyPaths {
    static func check(_ node: PredicateNode, in entity: NSEntityDescription) throws {
        switch node {
        case .constant: return
        case .and(let parts), .or(let parts): for part in parts { try check(part, in: entity) }
        case .not(let inner): try check(inner, in: entity)
        case .comparison(let comparison):
            try check(comparison.lhs, in: entity)
            try check(comparison.rhs, in: entity)
        }
    }

    static func check(_ node: ExpressionNode, in entity: NSEntityDescription) throws {
        switch node {
        case .keyPath(let path): try check(path, in: entity)
        case .keyPathFrom(let base, _): try check(base, in: entity)
        case .aggregate(let items), .function(_, let items): for item in items { try check(item, in: entity) }
        case .block:
            throw PredicateErrors.unsupportedPredicate("block expressions are evaluated in memory only, not in a batch request", in: node)
        case .subquery(let collection, _, let predicate):
            try check(collection, in: entity)
            try check(predicate, in: entity)
        case .conditional(let predicate, let a, let b):
            try check(predicate, in: entity)
            try check(a, in: entity)
            try check(b, in: entity)
        case .constant, .variable, .evaluatedObject, .fetchRequest: return
        }
    }

    /// Whether an expression reads a key path on through one of `entity`'s to-one relationships
    /// (`owner.name`), which a store's `UPDATE` can't join. A to-many's aggregate (`cars.@count`,
    /// a `SUBQUERY`) is a subquery of its own, which every store computes.
    static func readsRelationship(_ node: ExpressionNode, of entity: NSEntityDescription) -> Bool {
        switch node {
        case .keyPath(let path):
            guard path.count > 1, let relationship = entity.relationshipsByName[path[0]] else { return false }
            return !relationship.isToMany
        case .keyPathFrom(let base, _): return readsRelationship(base, of: entity)
        case .aggregate(let items), .function(_, let items): return items.contains { readsRelationship($0, of: entity) }
        case .conditional(let condition, let a, let b):
            return readsRelationship(condition, of: entity) || readsRelationship(a, of: entity) || readsRelationship(b, of: entity)
        default: return false
        }
    }

    /// ``readsRelationship(_:of:)`` for a condition's expressions.
    static func readsRelationship(_ node: PredicateNode, of entity: NSEntityDescription) -> Bool {
        switch node {
        case .constant: return false
        case .and(let parts), .or(let parts): return parts.contains { readsRelationship($0, of: entity) }
        case .not(let inner): return readsRelationship(inner, of: entity)
        case .comparison(let comparison): return readsRelationship(comparison.lhs, of: entity) || readsRelationship(comparison.rhs, of: entity)
        }
    }

    /// Each key of `path` a property of the entity reached so far, up to a collection operator.
    private static func check(_ path: [String], in entity: NSEntityDescription) throws {
        var current: NSEntityDescription? = entity
        for key in path {
            guard let owner = current, !key.hasPrefix("@"), key.lowercased() != "self" else { return }
            guard let property = owner.propertiesByName[key] else {
                throw CoreDataError.make(.coreData, "keypath \(path.joined(separator: ".")) not found in entity \(owner.name ?? ""): '\(key)' is not one of its properties; nothing was changed",
                                         extra: [NSValidationKeyErrorKey: key])
            }
            current = (property as? NSRelationshipDescription)?.destinationEntity
        }
    }
}
