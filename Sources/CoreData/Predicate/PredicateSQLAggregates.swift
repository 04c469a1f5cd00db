import Foundation

// Scalar values computed in SQL: collection operators on to-many key paths (`items.@count`,
// `items.@sum.price`), `SUBQUERY(…).@count`, and functions of stored values (`price * 2`,
// `abs:(delta)`). Each gives what `PredicateEvaluator` gives for the same row.

extension PredicateSQLCompiler {
    /// The rows of a to-many relationship's destination for the current row of its source:
    /// the destination's alias, the `FROM` text and the condition that links them.
    mutating func elements(of path: ToManyPath) throws(CompileError) -> (alias: String, from: String, link: String) {
        let relationship = path.relationship
        guard let destination = relationship.destinationEntity else {
            throw CompileError(reason: "the relationship \(relationship.name) has no destination")
        }
        let alias = newAlias()
        let table = schema.table(of: destination)
        switch schema.toManyStorage(of: relationship) {
        case let .join(join, source, member, _)?:
            let joinAlias = newAlias()
            return (alias, "\(join) \(joinAlias) JOIN \(table) \(alias) ON \(primaryKey(of: alias)) = \(joinAlias).\(member)",
                    "\(joinAlias).\(source) = \(primaryKey(of: path.sourceAlias))")
        case let .foreignKey(column, _, _)?:
            return (alias, "\(table) \(alias)", "\(alias).\(column) = \(primaryKey(of: path.sourceAlias))")
        case nil:
            throw CompileError(reason: relationship.isTransient ? "the to-many relationship \(relationship.name) is transient and not stored"
                                                                : SQLiteSchema.unmapped(relationship).localizedDescription)
        }
    }

    /// `(SELECT <aggregate> FROM <elements> WHERE <link> [AND <filter>])` with `element` resolved
    /// in the elements' scope first (`nil`: the aggregate needs no column).
    private mutating func scalarSubquery(_ path: ToManyPath,
                                         _ body: (inout PredicateSQLCompiler) throws(CompileError) -> (select: SQLFragment, filter: SQLFragment, kind: ValueKind)) throws(CompileError) -> Operand {
        guard let destination = path.relationship.destinationEntity else {
            throw CompileError(reason: "the relationship \(path.relationship.name) has no destination")
        }
        let (alias, from, link) = try elements(of: path)
        scopes.append(Scope(alias: alias, entity: destination))
        defer { scopes.removeLast() }
        let (select, filter, kind) = try body(&self)
        let joins = scopes[currentScope].joins
        let joinText = joins.isEmpty ? "" : " " + joins.joined(separator: " ")
        if filter.sql == "0" {
            // No element qualifies: what the aggregate gives for none.
            return .value(SQLFragment("(SELECT ") + select + " FROM \(from)\(joinText) WHERE \(dialect.alwaysFalse))", kind)
        }
        let condition = filter.sql == "1" ? SQLFragment(link) : link + " AND " + filter
        return .value("(SELECT " + select + " FROM \(from)\(joinText) WHERE " + condition + ")", kind)
    }

    /// `@count`, `@sum.x`, `@avg.x`, `@min.x`, `@max.x` of a to-many key path.
    mutating func collectionOperator(_ key: String, _ path: ToManyPath) throws(CompileError) -> Operand {
        let op = key.lowercased()
        if op == "@count" {
            guard path.rest.isEmpty else { throw CompileError(reason: "nothing may follow @count in a fetch") }
            return try scalarSubquery(path) { _ throws(CompileError) in (SQLFragment("COUNT(*)"), .alwaysTrue, .integer) }
        }
        guard ["@sum", "@avg", "@min", "@max"].contains(op) else {
            throw CompileError(reason: "the collection operator \(key) is not supported")
        }
        guard !path.rest.isEmpty else { throw CompileError(reason: "\(key) needs a key path after it (\(key).price)") }
        return try scalarSubquery(path) { (compiler: inout PredicateSQLCompiler) throws(CompileError) in
            guard case .value(let column, let kind) = try compiler.resolve(path.rest, in: compiler.currentScope) else {
                throw CompileError(reason: "\(key) of a to-many key path inside a to-many key path is not supported in a fetch")
            }
            switch op {
            case "@sum", "@avg":
                guard kind.isNumeric else { throw CompileError(reason: "\(key) needs a number attribute, not \(path.rest.joined(separator: "."))") }
                if compiler.dialect == .postgreSQL {
                    let (sql, sumKind) = compiler.postgreSQLSum(op == "@sum", of: column, kind)
                    return (sql, .alwaysTrue, sumKind)
                }
                return op == "@sum" ? ("cd_sum(" + column + ")", .alwaysTrue, kind) : ("(cd_sum(" + column + ") * 1.0 / COUNT(" + column + "))", .alwaysTrue, .real)
            default:
                guard kind.isOrdered else { throw CompileError(reason: "\(key) needs an attribute with an order, not \(path.rest.joined(separator: "."))") }
                return ((op == "@min" ? "MIN(" : "MAX(") + compiler.ordered(column, kind) + ")", .alwaysTrue, kind)
            }
        }
    }

    /// `SUBQUERY(collection, $variable, predicate).@count`.
    mutating func subqueryCount(_ collection: ExpressionNode, _ variable: String, _ predicate: PredicateNode) throws(CompileError) -> Operand {
        guard case .toMany(let path) = try operand(collection), path.rest.isEmpty else {
            throw CompileError(reason: "SUBQUERY needs a to-many relationship as its collection in a fetch")
        }
        return try scalarSubquery(path) { (compiler: inout PredicateSQLCompiler) throws(CompileError) in
            let saved = compiler.iterators[variable]
            compiler.iterators[variable] = compiler.currentScope
            defer { compiler.iterators[variable] = saved }
            return (SQLFragment("COUNT(*)"), try compiler.compileNode(predicate), .integer)
        }
    }

    /// A function of operands: folded when they are all constants; `sum:`… of a to-many key
    /// path as its collection operator; otherwise `cd_fn(name, …)` of numbers or strings.
    mutating func function(_ name: String, _ operands: [Operand], _ expression: ExpressionNode) throws(CompileError) -> Operand {
        var constants: [PredicateValue] = []
        for case .constant(let value) in operands { constants.append(value) }
        if constants.count == operands.count { return .constant(PredicateFunctions.apply(name, constants)) }
        if PredicateFunctions.setOperators[name] != nil {
            throw CompileError(reason: "set expressions (UNION, INTERSECT, MINUS) need constant collections in a fetch: \(expression)")
        }
        let statistics = ["sum:": "@sum", "count:": "@count", "min:": "@min", "max:": "@max", "average:": "@avg"]
        if operands.count == 1, case .toMany(let path) = operands[0], let op = statistics[name] {
            return try collectionOperator(op, path)
        }
        if name == "objectFrom:withIndex:", operands.count == 2, case .toMany(let path) = operands[0] {
            // `items[SIZE]` is `items.@count`; `[FIRST]`, `[LAST]` and `[n]` have no order to
            // follow in a to-many relationship's rows.
            guard case .constant(.string(let index)) = operands[1], index.uppercased() == "SIZE" else {
                throw CompileError(reason: "only [SIZE] of a to-many relationship is supported in a fetch (its elements have no index): \(expression)")
            }
            return try collectionOperator("@count", path)
        }
        let stringFunctions: Set<String> = ["uppercase:", "lowercase:", "canonical:", "length:"]
        let wantsStrings = stringFunctions.contains(name)
        var arguments: [SQLFragment] = [.bind(.string(name))]
        for item in operands {
            switch item {
            case .toMany:
                throw CompileError(reason: "to-many key not allowed here: \(expression)")
            case .constant(let value):
                switch value {
                case .null: arguments.append("NULL")
                case .int(let v) where !wantsStrings: arguments.append(.bind(.int(v)))
                case .double(let v) where !wantsStrings: arguments.append(.bind(.double(v)))
                case .string(let v) where wantsStrings: arguments.append(.bind(.string(v)))
                default: throw CompileError(reason: "\(value.formatDescription) cannot be an argument of \(name) in a fetch")
                }
            case .value(let column, let kind):
                guard wantsStrings ? kind.isString : kind.isNumeric else {
                    throw CompileError(reason: "\(name) needs \(wantsStrings ? "string" : "number") values in a fetch: \(expression)")
                }
                arguments.append(column)
            }
        }
        // Addition, subtraction and multiplication are SQLite's own operators: on integers they give
        // an integer, and a real on overflow, as the evaluator does; NULL gives NULL either way.
        if dialect == .postgreSQL, let computed = postgreSQLArithmetic(name, operands) ?? postgreSQLFunction(name, operands) {
            return computed
        }
        let operators = ["add:to:": "+", "from:subtract:": "-", "multiply:by:": "*"]
        if let op = operators[name], arguments.count == 3 {
            // PostgreSQL fails on an integer overflow where SQLite goes on in floating point.
            try requireSQLite("arithmetic (\(name))")
            return .value("(" + arguments[1] + " \(op) " + arguments[2] + ")", .real)
        }
        let kind: ValueKind
        switch name {
        case "uppercase:", "lowercase:", "canonical:": kind = .string
        case "length:", "count:", "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:", "leftshift:by:",
             "rightshift:by:", "onesComplement:": kind = .integer
        default: kind = .real
        }
        try requireSQLite("the function \(name)")
        return .value("cd_fn(" + SQLFragment.joined(arguments, separator: ", ") + ")", kind)
    }

    /// `TERNARY(predicate, a, b)`: `CASE WHEN <predicate> THEN a ELSE b END`, for values of one
    /// kind (numbers of either kind, or `nil` on one side); constants are bound.
    mutating func conditional(_ predicate: PredicateNode, _ whenTrue: ExpressionNode, _ whenFalse: ExpressionNode,
                              _ expression: ExpressionNode) throws(CompileError) -> Operand {
        let condition = try compileNode(predicate)
        let a = try operand(whenTrue)
        let b = try operand(whenFalse)
        if case .constant(let x) = a, case .constant(let y) = b, condition.sql == "1" || condition.sql == "0" {
            return .constant((condition.sql == "1" ? x : y).computed)
        }
        func scalar(_ item: Operand) throws(CompileError) -> (SQLFragment, ValueKind?) {
            switch item {
            case .value(let fragment, let kind): return (fragment, kind)
            case .constant(.null): return ("NULL", nil)
            case .constant(.int(let v)): return (.bind(.int(v)), .integer)
            case .constant(.double(let v)) where v.isNaN: return ("NULL", nil) // a computed NaN is nil
            case .constant(.double(let v)): return (.bind(.double(v)), .real)
            case .constant(.string(let v)): return (.bind(.string(v)), .string)
            case .constant(.date(let v)) where v.timeIntervalSinceReferenceDate.isNaN: return ("NULL", nil)
            case .constant(.date(let v)): return (.bind(.double(v.timeIntervalSinceReferenceDate)), .date)
            case .constant(let value): throw CompileError(reason: "\(value.formatDescription) cannot be a value of TERNARY in a fetch")
            case .toMany: throw CompileError(reason: "to-many key not allowed here: \(expression)")
            }
        }
        let (x, kx) = try scalar(a)
        let (y, ky) = try scalar(b)
        let kind: ValueKind
        switch (kx, ky) {
        case (nil, nil): return .constant(.null)
        case (let k?, nil), (nil, let k?): kind = k
        case (let k?, let l?) where k.isNumeric && l.isNumeric:
            if case .integer = k, case .integer = l { kind = .integer } else { kind = .real }
        case (let k?, let l?) where k.isCompatible(with: l): kind = k
        default: throw CompileError(reason: "the two values of \(expression) are of different kinds")
        }
        return .value("(CASE WHEN " + condition + " THEN " + x + " ELSE " + y + " END)", kind)
    }
}
