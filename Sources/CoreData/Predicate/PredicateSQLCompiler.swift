import Foundation

/// Compiles predicates and sort keys to SQL for the SQLite store, for one fetched entity whose
/// table is aliased `t0`.
///
/// ```swift
/// var compiler = PredicateSQLCompiler(entity: car)
/// let condition = try compiler.compile(try predicate.predicateTree())
/// let order = try compiler.orderBy(try descriptor.sortKey())
/// let sql = "SELECT t0.Z_PK FROM ZCAR t0 \(compiler.joins.joined(separator: " ")) WHERE \(condition.sql) ORDER BY \(order.sql)"
/// // bind condition.bindings, in order (ORDER BY terms bind nothing)
/// ```
///
/// Guarantees:
/// - Every value is bound as a `?` parameter (``SQLFragment/bindings``); none is written into
///   the SQL text. Only aliases, column and table names from the frozen model, and integer
///   literals the compiler chooses appear in the text.
/// - Every compiled condition is `0` or `1`, never `NULL`, so `NOT`, `AND` and `OR` behave as in
///   memory and the SQL selects exactly the rows ``PredicateEvaluator`` accepts (`name != 'x'`
///   includes rows whose name is `NULL`).
/// - Anything it cannot compile exactly throws (`PredicateErrors.unsupportedPredicate`); it
///   never falls back to loading and filtering.
///
/// Storage it assumes (what the SQLite store writes): integers and Booleans as INTEGER, doubles,
/// floats and decimals as REAL, strings as TEXT, dates as REAL seconds since 2001-01-01, UUIDs as
/// 16-byte BLOBs, data as BLOB, URLs as TEXT (`absoluteString`), to-one relationships as the
/// destination's `Z_PK`. String comparisons use BINARY collation; `[c]`/`[d]` and the string
/// operators use the functions ``registerFunctions(on:)`` installs.
internal struct PredicateSQLCompiler {
    /// What a key path or constant compiles to.
    enum Operand {
        /// A column or SQL expression, and the kind of value it holds (`NULL` for nil).
        case value(SQLFragment, ValueKind)
        /// A constant from the predicate.
        case constant(PredicateValue)
        /// A key path through a to-many relationship; needs `ANY`/`ALL`/`NONE`, `CONTAINS` or `IN`.
        case toMany(ToManyPath)
    }

    /// The kind of value a column holds, which decides how constants are bound against it.
    enum ValueKind {
        case integer, real, string, date, data, uuid, url
        /// A reference to an object (`Z_PK` or a foreign key) of an entity in this root entity's table.
        case object(NSEntityDescription)
        /// A value the store keeps opaque (transformable): only `== nil` / `!= nil` compile.
        case unsupported(String)

        var isNumeric: Bool {
            switch self { case .integer, .real: return true; default: return false }
        }
        var isInteger: Bool { if case .integer = self { return true } else { return false } }
        var isString: Bool { if case .string = self { return true } else { return false } }

        /// Whether values of the two kinds can be equal.
        func isCompatible(with other: ValueKind) -> Bool {
            switch (self, other) {
            case (.integer, .integer), (.integer, .real), (.real, .integer), (.real, .real),
                 (.string, .string), (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url):
                return true
            case (.object(let a), .object(let b)): return a === b
            default: return false
            }
        }

        /// Whether values of this kind have an order (numbers, strings, dates, UUIDs).
        var isOrdered: Bool {
            switch self { case .integer, .real, .string, .date, .uuid: return true; default: return false }
        }
    }

    struct ToManyPath {
        var sourceAlias: String
        var relationship: NSRelationshipDescription
        var rest: [String]
    }

    struct Scope {
        var alias: String
        var entity: NSEntityDescription
        var joins: [String] = []
        /// Join aliases by `sourceAlias.relationshipName`, so a to-one is joined once per scope.
        var joined: [String: (alias: String, entity: NSEntityDescription)] = [:]
    }

    /// The fetched entity.
    let entity: NSEntityDescription
    /// The file's names for tables and columns (quoted).
    let schema: SQLiteSchema
    /// The SQL spoken: SQLite's, or PostgreSQL's (`PredicateSQLDialect.swift`).
    let dialect: Dialect
    /// Values for `$VARIABLE`s.
    let variables: [String: Any]
    /// The store whose rows are compared (`nil`: any): an object or object ID of another store
    /// matches none of them, as `NSManagedObjectID`'s equality in memory says, though its key may
    /// be one of this store's (a coordinator sends one fetch to each of its stores).
    let store: NSPersistentStore?
    var scopes: [Scope]
    private var nextAlias = 1
    /// `SUBQUERY` iterator variables in force, by name: the scope of the element they stand for.
    var iterators: [String: Int] = [:]
    /// The columns of a dictionary fetch, by name, for its `HAVING` clause and sort keys:
    /// `$name` stands for the column's value (``compileResultColumn(_:)``).
    var columnOperands: [String: Operand] = [:]

    /// A compiler for `entity`'s rows in the file whose names `schema` gives (by default, a new
    /// file's: the names Apple's store derives from the model).
    init(entity: NSEntityDescription, schema: SQLiteSchema? = nil, variables: [String: Any] = [:], dialect: Dialect = .sqlite,
         store: NSPersistentStore? = nil) {
        self.entity = entity
        self.store = store
        self.schema = schema ?? SQLiteSchema(model: entity.managedObjectModel!)
        self.variables = variables
        self.dialect = dialect
        self.scopes = [Scope(alias: "t0", entity: entity)]
    }

    /// `LEFT JOIN` clauses for the to-one key paths compiled so far (by ``compile(_:)`` and
    /// ``orderBy(_:)``), to follow `FROM <table> t0`. They bind nothing.
    var joins: [String] { scopes[0].joins }

    /// A condition for the `WHERE` clause, `1` or `0` for each row, with its bindings. Throws an
    /// `unimplemented SQL generation for predicate` error (`NSCocoaErrorDomain` 134091) for what
    /// it cannot compile exactly.
    mutating func compile(_ node: PredicateNode) throws -> SQLFragment {
        do {
            return try compileNode(node)
        } catch {
            throw PredicateErrors.unsupportedPredicate(error.reason, in: node)
        }
    }

    /// Thrown inside the compiler; turned into an `NSError` naming the predicate at the top.
    struct CompileError: Error {
        var reason: String
    }

    // MARK: Predicates

    mutating func compileNode(_ node: PredicateNode) throws(CompileError) -> SQLFragment {
        switch node {
        case .constant(let value): return value ? .alwaysTrue : .alwaysFalse
        case .and(let parts):
            var compiled: [SQLFragment] = []
            for part in parts {
                let fragment = try compileNode(part)
                if fragment.sql == "0" { return .alwaysFalse }
                if fragment.sql != "1" { compiled.append(fragment) }
            }
            if compiled.isEmpty { return .alwaysTrue }
            return compiled.count == 1 ? compiled[0] : "(" + SQLFragment.joined(compiled, separator: " AND ") + ")"
        case .or(let parts):
            var compiled: [SQLFragment] = []
            for part in parts {
                let fragment = try compileNode(part)
                if fragment.sql == "1" { return .alwaysTrue }
                if fragment.sql != "0" { compiled.append(fragment) }
            }
            if compiled.isEmpty { return .alwaysFalse }
            return compiled.count == 1 ? compiled[0] : "(" + SQLFragment.joined(compiled, separator: " OR ") + ")"
        case .not(let inner):
            return Self.negate(try compileNode(inner))
        case .comparison(let comparison):
            return try compileComparison(comparison)
        }
    }

    static func negate(_ fragment: SQLFragment) -> SQLFragment {
        switch fragment.sql {
        case "1": return .alwaysFalse
        case "0": return .alwaysTrue
        default: return "(NOT " + fragment + ")"
        }
    }

    // MARK: Key paths and expressions

    var currentScope: Int { scopes.count - 1 }

    mutating func operand(_ expression: ExpressionNode) throws(CompileError) -> Operand {
        switch expression {
        case .keyPath(let path):
            // Bare key paths are read from the fetched object, also inside a SUBQUERY's
            // predicate (as the evaluator does: only `$variable` stands for the element).
            return try resolve(path, in: 0)
        case .constant(let value):
            return .constant(value)
        case .evaluatedObject:
            let scope = scopes[0]
            return .value(SQLFragment(primaryKey(of: scope.alias)), .object(scope.entity.rootEntity))
        case .variable(let name):
            if let scope = iterators[name] {
                return .value(SQLFragment(primaryKey(of: scopes[scope].alias)), .object(scopes[scope].entity.rootEntity))
            }
            if let column = columnOperands[name] { return column }
            guard let value = variables[name] else { throw CompileError(reason: "the variable $\(name) has no value") }
            return .constant(PredicateValue(value))
        case .aggregate(let items):
            var values: [PredicateValue] = []
            for item in items {
                guard case .constant(let value) = try operand(item) else {
                    throw CompileError(reason: "aggregates of key paths are not supported: \(expression)")
                }
                values.append(value)
            }
            return .constant(.collection(values))
        case .function(let name, let args):
            var operands: [Operand] = []
            for arg in args { operands.append(try operand(arg)) }
            return try function(name, operands, expression)
        case .keyPathFrom(.variable(let name), let path) where iterators[name] != nil:
            return try resolve(path, in: iterators[name]!)
        case .keyPathFrom(.subquery(let collection, let variable, let predicate), let path):
            guard path.count == 1, path[0].lowercased() == "@count" else {
                throw CompileError(reason: "only SUBQUERY(…).@count is supported in a fetch: \(expression)")
            }
            return try subqueryCount(collection, variable, predicate)
        case .keyPathFrom(let base, let path):
            guard case .constant(let value) = try operand(base) else {
                throw CompileError(reason: "key paths from \(base) are not supported: \(expression)")
            }
            return .constant(PredicateValue(PredicateKeyValue.value(of: value.walkable, keyPath: path)))
        case .conditional(let predicate, let whenTrue, let whenFalse):
            return try conditional(predicate, whenTrue, whenFalse, expression)
        case .subquery:
            throw CompileError(reason: "\(expression) is not supported in a fetch (SUBQUERY needs .@count)")
        case .fetchRequest:
            // A context runs these before a store compiles the predicate (NSFetchRequestExpression.swift).
            throw CompileError(reason: "\(expression) must run on its context before the store sees the predicate")
        case .block:
            throw CompileError(reason: "block expressions are evaluated in memory only, not in a fetch: \(expression)")
        }
    }

    /// Resolves a key path in a scope: attributes become columns, to-one relationships foreign
    /// keys (joined when the path goes on), a to-many relationship a ``ToManyPath``, or a scalar
    /// subquery when a collection operator follows it (`items.@count`, `items.@sum.price`).
    mutating func resolve(_ path: [String], in scopeIndex: Int) throws(CompileError) -> Operand {
        var alias = scopes[scopeIndex].alias
        var entity = scopes[scopeIndex].entity
        for (offset, key) in path.enumerated() {
            let isLast = offset == path.count - 1
            if key.hasPrefix("@") {
                throw CompileError(reason: "the collection operator \(key) is not supported yet")
            }
            guard let property = entity.propertiesByName[key] else {
                throw CompileError(reason: "keypath \(path.joined(separator: ".")) not found in entity \(entity.name ?? "?")")
            }
            if property.isTransient {
                throw CompileError(reason: "\(entity.name ?? "?").\(key) is transient and not stored")
            }
            if let attribute = property as? NSAttributeDescription {
                // An element of a composite attribute: its leaf, named by the path (`address.city`).
                var (attribute, offset, isLast) = (attribute, offset, isLast)
                if let composite = attribute as? NSCompositeAttributeDescription {
                    guard let (leaf, end) = Self.leaf(of: composite, in: path, from: offset) else {
                        throw CompileError(reason: "keypath \(path.joined(separator: ".")) does not name an element of the composite attribute \(entity.name ?? "?").\(key): a fetch compares its elements (\(key).<element>), not the whole composite")
                    }
                    (attribute, offset, isLast) = (leaf, end, end == path.count - 1)
                    if attribute.isTransient {
                        throw CompileError(reason: "\(entity.name ?? "?").\(leaf.name) is transient and not stored")
                    }
                }
                guard let name = schema.column(of: attribute) else { throw CompileError(reason: SQLiteSchema.unmapped(attribute).localizedDescription) }
                let column = SQLFragment(alias + "." + name)
                if isLast { return .value(column, Self.kind(of: attribute)) }
                if offset == path.count - 2, let value = Self.valueKey(path[offset + 1], of: column, Self.kind(of: attribute)) {
                    return dialect == .postgreSQL ? postgreSQLValueKey(path[offset + 1], of: column, value) : value
                }
                throw CompileError(reason: "keypath \(path.joined(separator: ".")) continues past the attribute \(key)")
            }
            guard let relationship = property as? NSRelationshipDescription,
                  let destination = relationship.destinationEntity else {
                throw CompileError(reason: "\(key) is not an attribute or relationship")
            }
            if relationship.isToMany {
                let rest = Array(path[(offset + 1)...])
                if let first = rest.first, first.hasPrefix("@") {
                    return try collectionOperator(first, ToManyPath(sourceAlias: alias, relationship: relationship, rest: Array(rest.dropFirst())))
                }
                return .toMany(ToManyPath(sourceAlias: alias, relationship: relationship, rest: rest))
            }
            guard let column = schema.column(of: relationship) else { throw CompileError(reason: SQLiteSchema.unmapped(relationship).localizedDescription) }
            let foreignKey = alias + "." + column
            if isLast { return .value(SQLFragment(foreignKey), .object(destination.rootEntity)) }
            let joinKey = alias + "." + relationship.name
            if let existing = scopes[scopeIndex].joined[joinKey] {
                alias = existing.alias
            } else {
                let joinAlias = newAlias()
                scopes[scopeIndex].joins.append("LEFT JOIN \(schema.table(of: destination)) \(joinAlias) ON \(primaryKey(of: joinAlias)) = \(foreignKey)")
                scopes[scopeIndex].joined[joinKey] = (joinAlias, destination)
                alias = joinAlias
            }
            entity = destination
        }
        let scope = scopes[scopeIndex]
        return .value(SQLFragment(primaryKey(of: scope.alias)), .object(scope.entity.rootEntity))
    }

    /// The leaf element of `composite` that `path` names from `offset` on (`address.city`,
    /// `address.geo.latitude`), and the offset of the path's last key naming it.
    static func leaf(of composite: NSCompositeAttributeDescription, in path: [String], from offset: Int) -> (CompositeLeafAttribute, Int)? {
        var name = path[offset]
        for end in (offset + 1)..<max(path.count, offset + 1) {
            name += "." + path[end]
            if let leaf = composite.leaf(named: name) { return (leaf, end) }
        }
        return nil
    }

    /// A key of an attribute's value that SQL computes exactly as ``PredicateValueKeys`` does in
    /// memory: a string's `length` (UTF-16 units, through `cd_fn`), `uppercaseString` and
    /// `lowercaseString`, a binary value's `length` (bytes), a date's
    /// `timeIntervalSinceReferenceDate` and `timeIntervalSince1970`. `nil` for other keys.
    static func valueKey(_ key: String, of column: SQLFragment, _ kind: ValueKind) -> Operand? {
        // The name is written in the SQL, not bound: an ORDER BY term carries no bindings.
        func function(_ name: String) -> SQLFragment { "cd_fn('" + SQLFragment(name) + "', " + column + ")" }
        switch (kind, key) {
        case (.string, "length"): return .value(function("length:"), .integer)
        case (.string, "uppercaseString"): return .value(function("uppercase:"), .string)
        case (.string, "lowercaseString"): return .value(function("lowercase:"), .string)
        case (.data, "length"): return .value("length(" + column + ")", .integer)
        case (.date, "timeIntervalSinceReferenceDate"): return .value(column, .real)
        case (.date, "timeIntervalSince1970"): return .value("(" + column + " + \(Date.timeIntervalBetween1970AndReferenceDate))", .real)
        default: return nil
        }
    }

    mutating func newAlias() -> String {
        defer { nextAlias += 1 }
        return "t\(nextAlias)"
    }

    static func kind(of attribute: NSAttributeDescription) -> ValueKind {
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType: return .integer
        case .doubleAttributeType, .floatAttributeType, .decimalAttributeType: return .real
        case .stringAttributeType: return .string
        case .dateAttributeType: return .date
        case .binaryDataAttributeType: return .data
        case .UUIDAttributeType: return .uuid
        case .URIAttributeType: return .url
        default: return .unsupported("\(attribute.entity?.name ?? "?").\(attribute.name) (\(attribute.attributeValueClassName ?? "transformable"))")
        }
    }

    // MARK: To-many subqueries

    /// `EXISTS (SELECT 1 FROM <destination> … WHERE <linked to the source row> AND <condition>)`,
    /// where `condition` is given the element (the rest of the path, resolved in the subquery).
    /// A further to-many relationship in the rest of the path nests another `EXISTS`, which
    /// flattens the path as key-value coding does.
    mutating func exists(_ path: ToManyPath, _ condition: (inout PredicateSQLCompiler, Operand) throws(CompileError) -> SQLFragment) throws(CompileError) -> SQLFragment {
        let relationship = path.relationship
        guard let destination = relationship.destinationEntity else {
            throw CompileError(reason: "the relationship \(relationship.name) has no destination")
        }
        let (alias, from, link) = try elements(of: path)
        scopes.append(Scope(alias: alias, entity: destination))
        defer { scopes.removeLast() }
        let inner: SQLFragment
        if path.rest.isEmpty {
            inner = try condition(&self, .value(SQLFragment(primaryKey(of: alias)), .object(destination.rootEntity)))
        } else {
            switch try resolve(path.rest, in: currentScope) {
            case .toMany(let nested): inner = try exists(nested, condition)
            case let element: inner = try condition(&self, element)
            }
        }
        if inner.sql == "0" { return .alwaysFalse }
        let joins = scopes[currentScope].joins
        let joinText = joins.isEmpty ? "" : " " + joins.joined(separator: " ")
        let filter = inner.sql == "1" ? SQLFragment(link) : link + " AND " + inner
        return "EXISTS (SELECT 1 FROM \(from)\(joinText) WHERE " + filter + ")"
    }
}
