import Foundation

/// What a dictionary-result fetch asks a store for, compiled from an `NSFetchRequest` with
/// `resultType = .dictionaryResultType`: columns (plain key paths and expressions), grouping, a
/// predicate on the groups, distinctness. Stores answer with one row of ``StoreValue``s per
/// result, in column order (`.null` for nil): the SQLite store in one `SELECT`, the in-memory
/// store in Swift, with the same answers.
internal struct DictionaryPlan: @unchecked Sendable {
    /// One column of the results.
    struct Column {
        /// The key of the value in each result dictionary.
        var name: String
        /// What the column holds: a key path (attributes and to-one relationships, through
        /// to-one relationships) or any expression.
        var expression: ExpressionNode
        /// The attribute a plain key path ends at: its values come back in the attribute's own
        /// type (`nil` for expressions and to-one relationships).
        var attribute: NSAttributeDescription?
        /// The type an expression's value is returned as; `.undefinedAttributeType` for the type
        /// it has.
        var resultType: NSAttributeType = .undefinedAttributeType
        /// Whether the column aggregates rows: `sum:`, `count:`, `min:`, `max:` or `average:` of
        /// a per-row value (not of a to-many key path, which is per row).
        var isAggregate: Bool = false
        /// For one leaf of a composite asked for whole: the composite's value it goes into.
        var part: CompositePart?
    }

    /// A leaf column of a composite attribute that a dictionary fetch asked for whole
    /// (`address`, or a nested composite, `address.geo`): the results hold the composite's
    /// dictionary under ``key``, assembled from its leaf columns.
    struct CompositePart {
        /// The key of the composite's dictionary in each result.
        let key: String
        let composite: NSCompositeAttributeDescription
        /// The element path of the composite asked for (`["address"]`, `["address", "geo"]`).
        let prefix: [String]
        let leaf: CompositeLeafAttribute

        /// The name of the column of the leaf at `path`: one no request can name (a control
        /// character first, as the compiler's aggregate columns), so sorts, `havingPredicate` and
        /// the stores' column operands never take it for the composite.
        static func columnName(_ path: [String]) -> String { "\u{1}composite:" + path.joined(separator: ".") }
    }

    /// The entity, predicate, sort keys, limit and offset (applied to the results: groups, or
    /// distinct rows).
    var fetch: FetchPlan
    var columns: [Column]
    var groupBy: [Column] = []
    /// Applies to the groups; names the columns by their names (`total > 10`, `$total > 10`) or
    /// computes aggregates itself (`count:(title) > 1`).
    var having: PredicateNode?
    var distinct: Bool = false
    /// The fetch request's own `propertiesToFetch`, `propertiesToGroupBy` and `havingPredicate`,
    /// which an ``NSIncrementalStore`` is passed.
    var requestPropertiesToFetch: [Any]?
    var requestPropertiesToGroupBy: [Any]?
    var requestHavingPredicate: NSPredicate?

    /// The column a sort key names by its name, when the key is not simply that column's own
    /// key path: a computed column (`total`), or a description renaming a key path (`made` for
    /// `year`). Such keys order the results by the column; `nil` for keys of the entity.
    func column(namedBy key: SortKey) -> Column? {
        guard key.path.count == 1, let column = columns.first(where: { $0.name == key.path[0] }) else { return nil }
        if case .keyPath(let path) = column.expression, path == key.path { return nil }
        return column
    }

    /// The functions that aggregate rows in a dictionary fetch, as SQL computes them.
    static let aggregateFunctions: Set<String> = ["sum:", "count:", "min:", "max:", "average:"]

    /// Whether `expression` aggregates rows: an aggregate function of something that is not a
    /// to-many key path (`entity` resolves key paths).
    static func isAggregate(_ expression: ExpressionNode, entity: NSEntityDescription) -> Bool {
        guard case .function(let name, let arguments) = expression, aggregateFunctions.contains(name),
              arguments.count == 1 else { return false }
        if case .keyPath(let path) = arguments[0] { return !entity.crossesToMany(path) }
        return true
    }
}

extension NSEntityDescription {
    /// Whether a key path goes through (or ends at) a to-many relationship.
    func crossesToMany(_ path: [String]) -> Bool {
        var entity: NSEntityDescription? = self
        for key in path {
            guard let property = entity?.propertiesByName[key] else { return false }
            guard let relationship = property as? NSRelationshipDescription else { return false }
            if relationship.isToMany { return true }
            entity = relationship.destinationEntity
        }
        return false
    }
}

extension StoreValue {
    /// A computed value (a column of a dictionary fetch) as `type`: numbers converted between
    /// integer, floating-point, decimal and Boolean; dates from seconds since 2001-01-01 (how
    /// the SQLite store keeps them); UUIDs from 16 bytes or text; URLs from text. A value that
    /// does not convert is returned as it is; `.undefinedAttributeType` returns it as it is.
    func converted(to type: NSAttributeType) -> StoreValue {
        func number() -> Double? {
            switch self {
            case .int(let v): return Double(v)
            case .double(let v): return v
            case .bool(let v): return v ? 1 : 0
            case .decimal(let v): return v.nearestDouble
            case .date(let v): return v.timeIntervalSinceReferenceDate
            default: return nil
            }
        }
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            if case .int = self { return self }
            if let d = number(), d.isFinite, abs(d) < 9.2e18 { return .int(Int64(d)) }
        case .doubleAttributeType, .floatAttributeType:
            if let d = number() { return .double(d) }
        case .decimalAttributeType:
            if case .int(let v) = self { return .decimal(Decimal(v)) }
            if let d = number() { return .decimal(Decimal(storing: d)) }
        case .booleanAttributeType:
            if let d = number() { return .bool(d != 0) }
        case .dateAttributeType:
            if case .date = self { return self }
            if let d = number() { return .date(Date(timeIntervalSinceReferenceDate: d)) }
        case .stringAttributeType:
            if case .int(let v) = self { return .string(String(v)) }
            if case .double(let v) = self { return .string(String(v)) }
        case .UUIDAttributeType:
            if case .data(let data) = self, let uuid = UUID(storedBytes: data) { return .uuid(uuid) }
            if case .string(let text) = self, let uuid = UUID(uuidString: text) { return .uuid(uuid) }
        case .URIAttributeType:
            if case .string(let text) = self, let url = URL(string: text) { return .url(url) }
        default: break
        }
        return self
    }
}
