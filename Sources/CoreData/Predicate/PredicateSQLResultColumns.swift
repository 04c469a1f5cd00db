import Foundation

// The columns, groups and HAVING clause of a dictionary fetch (`propertiesToFetch`,
// `propertiesToGroupBy`, `havingPredicate`), compiled for the SQLite store.

extension PredicateSQLCompiler {
    /// The SQL of one column of a dictionary fetch, and the kind of value it gives: a key path
    /// (joined through to-one relationships), an aggregate of the fetched rows (`sum:` →
    /// `cd_sum`, `average:`, `count:` → `COUNT`, `min:`/`max:` → `MIN`/`MAX`), or any
    /// expression a predicate may compare. Throws `NSCocoaErrorDomain` 134091 for what SQL
    /// cannot compute exactly (a to-many key path as a column, `sum:` of strings, …).
    ///
    /// ```swift
    /// let column = DictionaryPlan.Column(name: "total", expression: .function("sum:", [.keyPath(["price"])]), isAggregate: true)
    /// let (sql, kind) = try compiler.compileResultColumn(column)   // "cd_sum(t0.ZPRICE)", .real
    /// ```
    mutating func compileResultColumn(_ column: DictionaryPlan.Column) throws -> (SQLFragment, ValueKind) {
        do {
            return try resultOperand(column.expression, aggregate: column.isAggregate)
        } catch {
            throw PredicateErrors.unsupportedExpression(error.reason, column: column.name)
        }
    }

    /// The `HAVING` condition: `$name` stands for the column named `name`
    /// (``columnOperands``), and aggregate functions of stored values aggregate each group.
    mutating func compileHaving(_ having: PredicateNode) throws -> SQLFragment {
        var aggregates: [ExpressionNode] = []
        let entity = self.entity
        let rewritten = having.replacingExpressions { expression in
            guard DictionaryPlan.isAggregate(expression, entity: entity) else { return nil }
            aggregates.append(expression)
            return .variable("\u{1}aggregate\(aggregates.count - 1)")
        }
        do {
            for (offset, aggregate) in aggregates.enumerated() {
                let (fragment, kind) = try resultOperand(aggregate, aggregate: true)
                columnOperands["\u{1}aggregate\(offset)"] = .value(fragment, kind)
            }
        } catch {
            throw PredicateErrors.unsupportedPredicate(error.reason, in: "havingPredicate")
        }
        return try compile(rewritten)
    }

    private mutating func resultOperand(_ expression: ExpressionNode, aggregate: Bool) throws(CompileError) -> (SQLFragment, ValueKind) {
        if aggregate, case .function(let name, let arguments) = expression, arguments.count == 1 {
            return try rowAggregate(name, arguments[0], expression)
        }
        switch try operand(expression) {
        case .value(let fragment, let kind): return (fragment, kind)
        case .constant: throw CompileError(reason: "a constant is not a column of a fetch: \(expression)")
        case .toMany: throw CompileError(reason: "a to-many key path cannot be a column of a dictionary fetch: \(expression)")
        }
    }

    /// An aggregate over the fetched rows (or each group) of a per-row value. `nil` values are
    /// skipped; `sum:` of no values is 0, `average:`, `min:` and `max:` of none are `NULL`.
    private mutating func rowAggregate(_ name: String, _ argument: ExpressionNode, _ expression: ExpressionNode) throws(CompileError) -> (SQLFragment, ValueKind) {
        guard case .value(let column, let kind) = try operand(argument) else {
            throw CompileError(reason: "\(name) needs a stored value of each row: \(expression)")
        }
        switch name {
        case "count:":
            return ("COUNT(" + column + ")", .integer)
        case "sum:", "average:":
            guard kind.isNumeric else { throw CompileError(reason: "\(name) needs numbers: \(expression)") }
            if dialect == .postgreSQL { return postgreSQLSum(name == "sum:", of: column, kind) }
            if name == "sum:" { return ("cd_sum(" + column + ")", kind) }
            return ("(cd_sum(" + column + ") * 1.0 / COUNT(" + column + "))", .real)
        case "min:", "max:":
            guard kind.isOrdered else { throw CompileError(reason: "\(name) needs values with an order: \(expression)") }
            return ((name == "min:" ? "MIN(" : "MAX(") + ordered(column, kind) + ")", kind)
        default:
            throw CompileError(reason: "\(name) cannot aggregate the rows of a fetch; use sum:, count:, min:, max: or average:")
        }
    }
}
