import Foundation

// Dictionary results (`resultType = .dictionaryResultType`): `propertiesToFetch`,
// `propertiesToGroupBy`, `havingPredicate`, `returnsDistinctResults`, computed by the store.

extension NSManagedObjectContext {
    /// One dictionary per result, keyed by the names of `propertiesToFetch` (attribute and
    /// relationship names, key paths as written, `NSExpressionDescription` names); `nil` values
    /// are left out, to-one relationships are object IDs. As on Apple platforms, the results
    /// reflect the persistent store: unsaved changes of the context (and its parents) are not
    /// included.
    internal func fetchDictionaries<T>(_ request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> [Any] {
        if let parent = _parent, QueryGeneration.live.load(ordering: .relaxed) > 0 {
            // The store as the root context sees it: through its query generation, if pinned.
            return try parent.performAndWait { try parent.fetchDictionaries(request, entity: entity) }
        }
        let coordinator = try persistentStoreCoordinatorOrThrow()
        let plan = try dictionaryPlan(for: request, entity: entity)
        let composites = plan.columns.contains { $0.part != nil }
        return try readingAtGeneration { try coordinator.fetchDictionaryRows(plan) }.map { values in
            var dictionary: [String: Any] = [:]
            for (column, value) in zip(plan.columns, values) where column.part == nil {
                if let attribute = column.attribute, attribute.attributeType == .transformableAttributeType, case .data(let data) = value {
                    dictionary[column.name] = TransformableCoding.decode(data, for: attribute)
                } else if let object = value.objectValue {
                    dictionary[column.name] = object
                }
            }
            if composites { Self.addComposites(plan.columns, values, to: &dictionary) }
            return NSDictionary(dictionary: dictionary)
        }
    }

    /// Adds to `dictionary` each composite asked for whole, assembled from its leaf columns.
    private static func addComposites(_ columns: [DictionaryPlan.Column], _ values: ContiguousArray<StoreValue>, to dictionary: inout [String: Any]) {
        var leaves: [String: (part: DictionaryPlan.CompositePart, values: [Int: Any])] = [:]
        for (column, value) in zip(columns, values) {
            guard let part = column.part else { continue }
            var object = value.objectValue
            if part.leaf.attributeType == .transformableAttributeType, case .data(let data) = value {
                object = TransformableCoding.decode(data, for: part.leaf)
            }
            leaves[part.key, default: (part, [:])].values[part.leaf.index] = object
        }
        for (key, found) in leaves {
            let value = CompositeValues.assemble(found.part.composite, under: found.part.prefix) { found.values[$0] }
            if let value { dictionary[key] = value }
        }
    }

    /// The store's plan for a dictionary request. Throws `NSCoreDataError` (134060) for what
    /// Apple rejects: unknown key paths, to-many relationships or transient properties as
    /// columns, properties that are neither grouped nor aggregated, a `havingPredicate` without
    /// `propertiesToGroupBy`.
    internal func dictionaryPlan<T>(for request: NSFetchRequest<T>, entity: NSEntityDescription) throws -> DictionaryPlan {
        let fetch = try plan(for: request, entity: entity, withLimits: true)
        var columns: [DictionaryPlan.Column]
        if let properties = request.propertiesToFetch {
            columns = try properties.flatMap { try dictionaryColumns($0, entity: entity, role: "propertiesToFetch") }
        } else {
            // Every stored attribute and to-one relationship, a composite whole (not its leaves).
            let layout = entity.layout
            columns = try layout.properties.indices.filter { index in
                layout.properties[index] is NSCompositeAttributeDescription
                    ? !layout.properties[index].isTransient : layout.rowIndexes.contains(index) && !(layout.properties[index] is CompositeLeafAttribute)
            }.flatMap { index in
                try dictionaryColumns(layout.properties[index].name, entity: entity, role: "propertiesToFetch")
            }
        }
        for column in columns where column.isAggregate { try checkAggregate(column, entity: entity) }
        let groupBy = try (request.propertiesToGroupBy ?? []).flatMap { try dictionaryColumns($0, entity: entity, role: "propertiesToGroupBy") }
        func key(_ column: DictionaryPlan.Column) -> String {
            if case .keyPath(let path) = column.expression { return path.joined(separator: ".") }
            return column.name
        }
        if groupBy.isEmpty {
            if request.havingPredicate != nil {
                throw CoreDataError.make(.coreData, "Invalid fetch request: a havingPredicate needs propertiesToGroupBy")
            }
            if columns.contains(where: \.isAggregate), let plain = columns.first(where: { !$0.isAggregate }) {
                throw CoreDataError.make(.coreData,
                    "Invalid fetch request: '\(plain.part?.key ?? plain.name)' is neither an aggregate nor grouped; a fetch that aggregates rows without propertiesToGroupBy can only fetch aggregates")
            }
        } else {
            let grouped = Set(groupBy.map(key))
            for column in columns where !column.isAggregate && !grouped.contains(key(column)) {
                throw CoreDataError.make(.coreData,
                    "Invalid fetch request: SELECT clauses in queries with GROUP BY components can only contain properties named in the GROUP BY or aggregate functions ('\(column.part?.key ?? column.name)' is neither)")
            }
        }
        var result = DictionaryPlan(fetch: fetch, columns: columns, groupBy: groupBy)
        result.distinct = request.returnsDistinctResults && request.propertiesToFetch != nil
        result.requestPropertiesToFetch = request.propertiesToFetch
        result.requestPropertiesToGroupBy = request.propertiesToGroupBy
        result.requestHavingPredicate = request.havingPredicate
        if let having = request.havingPredicate {
            // Column names in the HAVING predicate stand for the columns' values.
            let names = Set(columns.map(\.name))
            let havingTree = try PredicateBridge.tree(of: having)
            if havingTree.containsBlock {
                throw PredicateErrors.unsupportedPredicate("block expressions are evaluated in memory only, not in a fetch's havingPredicate", in: havingTree)
            }
            result.having = try havingTree.runningFetchRequestExpressions().replacingExpressions { expression in
                if case .keyPath(let path) = expression, path.count == 1, names.contains(path[0]) { return .variable(path[0]) }
                return nil
            }
        }
        return result
    }

    /// Refuses, for every store alike, aggregates SQL cannot compute exactly: of a constant,
    /// `sum:`/`average:` of what is not a number, `min:`/`max:` of values without an order
    /// (data, transformable values, relationships). `NSCocoaErrorDomain` 134091, naming the column.
    private func checkAggregate(_ column: DictionaryPlan.Column, entity: NSEntityDescription) throws {
        guard case .function(let name, let arguments) = column.expression, arguments.count == 1 else { return }
        switch arguments[0] {
        case .constant, .aggregate:
            throw PredicateErrors.unsupportedExpression("\(name) needs a stored value of each row", column: column.name)
        case .keyPath(let path):
            guard name != "count:", !entity.crossesToMany(path) else { return }
            // The kinds the SQL compiler accepts (`PredicateSQLResultColumns`), so both stores refuse alike.
            let kind = (try? storedKeyPath(path, entity: entity, role: "propertiesToFetch")).map(PredicateSQLCompiler.kind(of:))
            let fits = kind.map { (name == "sum:" || name == "average:") ? $0.isNumeric : $0.isOrdered } ?? false
            if !fits {
                let what = (name == "sum:" || name == "average:") ? "numbers" : "values with an order"
                throw PredicateErrors.unsupportedExpression("\(name) needs \(what), not \(path.joined(separator: "."))", column: column.name)
            }
        default:
            return
        }
    }

    /// The columns of an entry of `propertiesToFetch` or `propertiesToGroupBy`: one, or for a
    /// composite attribute asked for whole (`address`, `owner.address`, `address.geo`), one per
    /// leaf element, which the results fold into the composite's dictionary.
    private func dictionaryColumns(_ item: Any, entity: NSEntityDescription, role: String) throws -> [DictionaryPlan.Column] {
        let column = try dictionaryColumn(item, entity: entity, role: role)
        guard case .keyPath(let path) = column.expression, column.attribute == nil,
              let (composite, prefix) = try compositeAsked(by: path, entity: entity) else { return [column] }
        let start = path.count - prefix.count
        return composite.leaves.filter { $0.elementPath.starts(with: prefix) }.map { leaf in
            // Named apart (no result key, sort key or HAVING name can be it): the results hold
            // the composite under `part.key`.
            let leafPath = Array(path[..<start]) + leaf.elementPath
            return DictionaryPlan.Column(name: DictionaryPlan.CompositePart.columnName(leafPath), expression: .keyPath(leafPath), attribute: leaf,
                                         part: .init(key: column.name, composite: composite, prefix: prefix, leaf: leaf))
        }
    }

    /// The composite attribute a key path names whole (after any to-one relationships), and
    /// the element path of the part asked for (`["address"]`, `["address", "geo"]`); `nil` for a
    /// key path that names something else.
    private func compositeAsked(by path: [String], entity: NSEntityDescription) throws -> (NSCompositeAttributeDescription, [String])? {
        var current = entity
        for (offset, key) in path.enumerated() {
            switch current.propertiesByName[key] {
            case let composite as NSCompositeAttributeDescription:
                let prefix = Array(path[offset...])
                return CompositeValues.elements(of: composite, at: prefix) != nil ? (composite, prefix) : nil
            case let relationship as NSRelationshipDescription:
                guard let destination = relationship.destinationEntity else { return nil }
                current = destination
            default:
                return nil
            }
        }
        return nil
    }

    /// A column from an entry of `propertiesToFetch` or `propertiesToGroupBy`: a property
    /// name or key path (`"owner.name"`), a property description, or an `NSExpressionDescription`.
    private func dictionaryColumn(_ item: Any, entity: NSEntityDescription, role: String) throws -> DictionaryPlan.Column {
        switch item {
        case let description as NSExpressionDescription:
            guard let expression = description.expression else {
                throw CoreDataError.make(.coreData, "Invalid \(role): the NSExpressionDescription '\(description.name)' has no expression")
            }
            guard !description.name.isEmpty else {
                throw CoreDataError.make(.coreData, "Invalid \(role): an NSExpressionDescription needs a name (the key of its values)")
            }
            guard !expression.node.containsBlock else {
                throw PredicateErrors.unsupportedExpression("block expressions are evaluated in memory only, not in a fetch", column: description.name)
            }
            let node = try expression.node.runningFetchRequestExpressions() // a FETCH(…) runs now, once
            var column = DictionaryPlan.Column(name: description.name, expression: node, resultType: description.expressionResultType,
                                               isAggregate: DictionaryPlan.isAggregate(node, entity: entity))
            // A plain stored key path keeps its attribute's type; others (`items.@count`) are computed.
            if case .keyPath(let path) = node { column.attribute = try? storedKeyPath(path, entity: entity, role: role) }
            return column
        case let property as NSPropertyDescription:
            // (A composite's element by its key path.)
            return try dictionaryColumn(entity.qualifiedName(of: property), entity: entity, role: role)
        case let name as String:
            let path = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let attribute = try storedKeyPath(path, entity: entity, role: role)
            return DictionaryPlan.Column(name: name, expression: .keyPath(path), attribute: attribute)
        case let keyPath as AnyKeyPath:
            // A Swift key path where Apple's code writes `#keyPath(Item.name)`.
            return try dictionaryColumn(TypedKeyPaths.names(of: keyPath).joined(separator: "."), entity: entity, role: role)
        default:
            throw CoreDataError.make(.coreData,
                "Invalid \(role): \(item) (\(type(of: item))) is not a property name, a property description, an NSExpressionDescription or a key path of @Managed properties")
        }
    }

    /// Checks a key path a store can read for each row: through to-one relationships, to an
    /// attribute (returned) or a to-one relationship (`nil`).
    private func storedKeyPath(_ path: [String], entity: NSEntityDescription, role: String) throws -> NSAttributeDescription? {
        let text = path.joined(separator: ".")
        var current = entity
        for (offset, key) in path.enumerated() {
            guard let property = current.propertiesByName[key] else {
                throw CoreDataError.make(.coreData, "Invalid keypath '\(text)' in \(role): \(current.name ?? "?") has no property '\(key)'")
            }
            if property.isTransient {
                throw CoreDataError.make(.coreData, "Invalid keypath '\(text)' in \(role): '\(key)' is transient, so no store holds it")
            }
            let isLast = offset == path.count - 1
            switch property {
            case let composite as NSCompositeAttributeDescription:
                // An element (`address.city`: its leaf), or the composite or a nested one whole (`nil`:
                // its leaves are the columns).
                let rest = Array(path[offset...])
                if let leaf = composite.leaf(named: rest.joined(separator: ".")) {
                    if leaf.isTransient {
                        throw CoreDataError.make(.coreData, "Invalid keypath '\(text)' in \(role): '\(leaf.name)' is transient, so no store holds it")
                    }
                    return leaf
                }
                guard CompositeValues.elements(of: composite, at: rest) != nil else {
                    throw CoreDataError.make(.coreData, "Invalid keypath '\(text)' in \(role): the composite '\(key)' has no element '\(rest.dropFirst().joined(separator: "."))'")
                }
                return nil
            case let attribute as NSAttributeDescription:
                guard isLast else {
                    throw CoreDataError.make(.coreData, "Invalid keypath '\(text)' in \(role): it goes on past the attribute '\(key)'")
                }
                return attribute
            case let relationship as NSRelationshipDescription:
                guard !relationship.isToMany else {
                    throw CoreDataError.make(.coreData, "Invalid keypath '\(text)' in \(role): '\(key)' is a to-many relationship; dictionary results hold attributes, to-one relationships and expressions")
                }
                guard let destination = relationship.destinationEntity else {
                    throw CoreDataError.make(.coreData, "Invalid keypath '\(text)' in \(role): '\(key)' has no destination entity")
                }
                current = destination
            default:
                throw CoreDataError.make(.coreData, "Invalid keypath '\(text)' in \(role): '\(key)' is not an attribute or relationship")
            }
        }
        return nil
    }
}
