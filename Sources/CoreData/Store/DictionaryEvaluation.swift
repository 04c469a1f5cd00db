import Foundation

/// A dictionary plan answered in Swift, over rows a store has already matched (the in-memory
/// store). Gives what the SQLite store's `SELECT` gives: the same columns in the same types,
/// groups (ordered by their group-by values unless sorted), aggregates that skip `nil`,
/// `HAVING`, `DISTINCT`, sorts on columns, then offset and limit.
internal enum DictionaryEvaluation {
    /// A matched row: its snapshot (for plain key paths) and its record (for expressions).
    typealias Row = (snapshot: RowSnapshot, object: StoreRecordObject)
    typealias Values = ContiguousArray<StoreValue>

    /// Whether the plan aggregates rows into groups (group-by properties, or aggregates only).
    static func isGrouped(_ plan: DictionaryPlan) -> Bool {
        !plan.groupBy.isEmpty || plan.columns.contains(where: \.isAggregate)
    }

    /// Whether the results are sorted once computed (groups, sorts by column names), so the
    /// rows need no order: the store should match them without sort keys.
    static func sortsResults(_ plan: DictionaryPlan) -> Bool {
        isGrouped(plan) || plan.fetch.sortKeys.contains { plan.column(namedBy: $0) != nil }
    }

    /// The results of `plan` over `rows` (matched, in the fetch's order unless ``sortsResults(_:)``,
    /// without offset and limit). `row` reads the snapshot of a related object.
    static func answer(_ plan: DictionaryPlan, rows: [Row], row: (NSManagedObjectID) -> RowSnapshot?) -> [Values] {
        let evaluator = PredicateEvaluator()
        func value(_ column: DictionaryPlan.Column, of item: Row) -> StoreValue {
            if case .keyPath(let path) = column.expression, let stored = stored(path, in: item.snapshot, row: row) {
                return stored
            }
            return StoreValue(computed: evaluator.value(of: column.expression, object: item.object)).converted(to: column.resultType)
        }
        func aggregate(_ expression: ExpressionNode, over group: [Row]) -> PredicateValue {
            guard case .function(let name, let arguments) = expression, arguments.count == 1 else { return .null }
            let values = group.map { evaluator.value(of: arguments[0], object: $0.object) }.filter { !$0.isNull }
            return PredicateFunctions.statistic(name, .collection(values))
        }

        // Each result with the row it came from (a group's first row), which sort keys naming
        // no column are read from, as SQLite reads a group's bare columns.
        var results: [(values: Values, source: StoreRecordObject?)] = []
        if isGrouped(plan) {
            var order: [Values] = []
            var groups: [Values: (key: Values, rows: [Row])] = [:]
            for item in rows {
                let key = Values(plan.groupBy.map { value($0, of: item) })
                let exact = exactKey(key)
                if groups[exact] == nil { order.append(exact); groups[exact] = (key, []) }
                groups[exact]!.rows.append(item)
            }
            if plan.groupBy.isEmpty && order.isEmpty { order = [[]]; groups[[]] = ([], []) }
            if plan.fetch.sortKeys.isEmpty { order.sort { isBefore(groups[$0]!.key, groups[$1]!.key) } }
            for exact in order {
                let group = groups[exact]!.rows
                var values = Values()
                for column in plan.columns {
                    if column.isAggregate {
                        values.append(StoreValue(computed: aggregate(column.expression, over: group)).converted(to: column.resultType))
                    } else {
                        values.append(group.first.map { value(column, of: $0) } ?? .null)
                    }
                }
                if let having = plan.having {
                    let entity = plan.fetch.entity
                    let computed = having.replacingExpressions { expression in
                        DictionaryPlan.isAggregate(expression, entity: entity) ? .constant(aggregate(expression, over: group)) : nil
                    }
                    // Column names are variables; other key paths read the group's first row.
                    let variables = record(values, plan)
                    guard PredicateEvaluator.evaluate(computed, object: group.first?.object, variables: variables) else { continue }
                }
                results.append((values, group.first?.object))
            }
        } else {
            results = rows.map { item in (Values(plan.columns.map { value($0, of: item) }), item.object) }
            if plan.distinct {
                var seen = Set<Values>()
                results = results.filter { seen.insert(exactKey($0.values)).inserted }
            }
        }
        if sortsResults(plan) && !plan.fetch.sortKeys.isEmpty {
            results = sorted(results, plan)
        }
        var answer = results.map(\.values)
        if plan.fetch.offset > 0 { answer = Array(answer.dropFirst(plan.fetch.offset)) }
        if plan.fetch.limit > 0 { answer = Array(answer.prefix(plan.fetch.limit)) }
        return answer
    }

    /// Values as SQLite tells them apart: strings by their bytes (Swift's `==` also equates
    /// canonically equivalent strings, "é" and "e\u{301}", which SQLite groups apart).
    private static func exactKey(_ values: Values) -> Values {
        Values(values.map { value in
            if case .string(let text) = value { return .data(Data(text.utf8)) }
            return value
        })
    }

    /// Results sorted by the fetch's sort keys: a key naming a column (by its name or key path:
    /// `total`, `owner.name`) compares the column's values, any other key the values on the
    /// result's source row. Ties keep their order.
    private static func sorted(_ results: [(values: Values, source: StoreRecordObject?)], _ plan: DictionaryPlan) -> [(values: Values, source: StoreRecordObject?)] {
        let keys = plan.fetch.sortKeys.map { key in
            (key, plan.columns.firstIndex { column in
                if column.name == key.keyPath { return true }
                if case .keyPath(let path) = column.expression { return path == key.path }
                return false
            })
        }
        let order = results.indices.sorted { a, b in
            for (key, column) in keys {
                let result: ComparisonResult
                if let column, key.comparator == nil {
                    result = key.directed(SortKey.compare(results[a].values[column].sqlOrderValue, results[b].values[column].sqlOrderValue, key.comparison))
                } else {
                    result = key.compare(results[a].source, results[b].source)
                }
                if result != .orderedSame { return result == .orderedAscending }
            }
            return a < b
        }
        return order.map { results[$0] }
    }

    /// A result's values by column name, as key-value coding gives them.
    private static func record(_ values: Values, _ plan: DictionaryPlan) -> [String: Any] {
        var record: [String: Any] = [:]
        for (column, value) in zip(plan.columns, values) {
            if let object = value.objectValue { record[column.name] = object }
        }
        return record
    }

    /// The stored value at the end of a key path through to-one relationships: an attribute's
    /// value or a to-one's ID (`nil` when the path is not of that kind).
    private static func stored(_ path: [String], in snapshot: RowSnapshot, row: (NSManagedObjectID) -> RowSnapshot?) -> StoreValue? {
        var current = snapshot
        for (offset, key) in path.enumerated() {
            guard let index = current.entity.layout.nameTable.index(of: key) else { return nil }
            let property = current.entity.layout.properties[index]
            if let composite = property as? NSCompositeAttributeDescription {
                // An element: its leaf's value.
                return composite.leaf(named: path[offset...].joined(separator: ".")).map { current.values[$0.index] }
            }
            if let relationship = property as? NSRelationshipDescription, relationship.isToMany { return nil }
            let value = current.values[index]
            if offset == path.count - 1 { return value }
            guard property is NSRelationshipDescription else { return nil }
            guard case .objectID(let id) = value else { return .null }
            guard let next = row(id) else { return .null }
            current = next
        }
        return nil
    }

    /// Group-by values in SQLite's order: `NULL` first, numbers, text, blobs (object IDs by
    /// their primary keys, as their foreign-key columns hold them).
    private static func isBefore(_ a: Values, _ b: Values) -> Bool {
        for (x, y) in zip(a, b) {
            switch SortKey.compare(x.sqlOrderValue, y.sqlOrderValue, .compare) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return false
    }
}

extension StoreValue {
    /// The value for ordering as SQLite orders its column (with ``SortKey/compare(_:_:_:)``,
    /// which takes Booleans as integers and UUIDs by their bytes): object IDs by their primary
    /// keys, as the foreign-key column holds them.
    var sqlOrderValue: PredicateValue {
        switch self {
        case .objectID(let id): return id.primaryKey.map { .int($0) } ?? .null
        case .object: return .null
        default: return PredicateValue(objectValue)
        }
    }

    /// A value an expression computed, in storage form (`.null` for collections and values
    /// stores do not hold).
    init(computed value: PredicateValue) {
        switch value {
        case .null, .collection, .other: self = .null
        case .int(let v): self = .int(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .date(let v): self = .date(v)
        case .data(let v): self = .data(v)
        case .uuid(let v): self = .uuid(v)
        case .url(let v): self = .url(v)
        case .objectID(let reference), .object(let reference):
            switch reference.object {
            case let id as NSManagedObjectID: self = .objectID(id)
            case let object as NSManagedObject: self = .objectID(object.objectID)
            case let record as PredicateKeyValueCoding: self = record.predicateObjectID.map { .objectID($0) } ?? .null
            default: self = .null
            }
        }
    }
}
