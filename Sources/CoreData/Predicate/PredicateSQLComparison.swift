import Foundation

// Comparisons: each compiles to SQL that is `0` or `1` for every row and agrees with
// `PredicateEvaluator.compare` on the values the row holds.

extension PredicateSQLCompiler {
    /// Codes of the string operators for `cd_strop(code, lhs, rhs, flags)`.
    static func stringOperatorCode(_ op: ComparisonOperator) -> Int? {
        switch op {
        case .beginsWith: return 1
        case .endsWith: return 2
        case .contains: return 3
        case .like: return 4
        case .matches: return 5
        case .in: return 6
        default: return nil
        }
    }

    static func stringOperator(code: Int) -> ComparisonOperator? {
        switch code {
        case 1: return .beginsWith
        case 2: return .endsWith
        case 3: return .contains
        case 4: return .like
        case 5: return .matches
        case 6: return .in
        default: return nil
        }
    }

    mutating func compileComparison(_ comparison: ComparisonNode) throws(CompileError) -> SQLFragment {
        let options = comparison.options.folding
        let op = comparison.op
        switch comparison.modifier {
        case .direct:
            let lhs = try operand(comparison.lhs)
            let rhs = try operand(comparison.rhs)
            if case .toMany(let path) = lhs {
                guard op == .contains else { throw CompileError(reason: "to-many key not allowed here") }
                if case .toMany = rhs { throw CompileError(reason: "to-many key not allowed here") }
                return try exists(path) { (compiler: inout PredicateSQLCompiler, element: Operand) throws(CompileError) in
                    try compiler.compare(element, .equalTo, rhs, options)
                }
            }
            if case .toMany(let path) = rhs {
                guard op == .in else { throw CompileError(reason: "to-many key not allowed here") }
                return try exists(path) { (compiler: inout PredicateSQLCompiler, element: Operand) throws(CompileError) in
                    try compiler.compare(lhs, .equalTo, element, options)
                }
            }
            return try compare(lhs, op, rhs, options)
        case .any, .all, .none:
            let lhs = try operand(comparison.lhs)
            let rhs = try operand(comparison.rhs)
            if case .toMany = rhs { throw CompileError(reason: "to-many key not allowed here") }
            let modifier = comparison.modifier
            switch lhs {
            case .toMany(let path):
                // ANY: some element matches; ALL: no element fails; NONE: no element matches.
                let found = try exists(path) { (compiler: inout PredicateSQLCompiler, element: Operand) throws(CompileError) in
                    let test = try compiler.compare(element, op, rhs, options)
                    return modifier == .all ? Self.negate(test) : test
                }
                return modifier == .any ? found : Self.negate(found)
            case .constant(let value):
                let items: [PredicateValue]
                switch value {
                case .null: items = []
                case .collection(let elements): items = elements
                default: items = [value]
                }
                if op == .equalTo, modifier != .all, items.count > Self.jsonListThreshold {
                    // `ANY {…} == x` is `x IN {…}`: one bound list, not an OR per element.
                    let membership = PredicateNode.comparison(ComparisonNode(lhs: comparison.rhs, op: .in, rhs: .constant(.collection(items)), options: comparison.options))
                    return try compileNode(modifier == .any ? membership : .not(membership))
                }
                var tests: [PredicateNode] = []
                for item in items {
                    tests.append(.comparison(ComparisonNode(lhs: .constant(item), op: op, rhs: comparison.rhs, options: comparison.options)))
                }
                switch modifier {
                case .any: return try compileNode(.or(tests))
                case .all: return try compileNode(.and(tests))
                default: return try compileNode(.not(.or(tests)))
                }
            case .value(let column, _):
                // A single value is a one-element collection, nil an empty one.
                let test = try compare(lhs, op, rhs, options)
                switch modifier {
                case .any: return Self.and("(" + column + " IS NOT NULL)", test)
                case .all: return Self.or("(" + column + " IS NULL)", test)
                default: return Self.or("(" + column + " IS NULL)", Self.negate(test))
                }
            }
        }
    }

    static func and(_ a: SQLFragment, _ b: SQLFragment) -> SQLFragment {
        if a.sql == "0" || b.sql == "0" { return .alwaysFalse }
        if a.sql == "1" { return b }
        if b.sql == "1" { return a }
        return "(" + a + " AND " + b + ")"
    }

    static func or(_ a: SQLFragment, _ b: SQLFragment) -> SQLFragment {
        if a.sql == "1" || b.sql == "1" { return .alwaysTrue }
        if a.sql == "0" { return b }
        if b.sql == "0" { return a }
        return "(" + a + " OR " + b + ")"
    }

    /// `lhs op rhs` for two resolved, non-to-many operands.
    mutating func compare(_ lhs: Operand, _ op: ComparisonOperator, _ rhs: Operand, _ options: ComparisonOptions) throws(CompileError) -> SQLFragment {
        switch (lhs, rhs) {
        case (.toMany, _), (_, .toMany):
            throw CompileError(reason: "to-many key not allowed here")
        case (.constant(let a), .constant(let b)):
            return PredicateEvaluator.compare(a, op, b, options: options) ? .alwaysTrue : .alwaysFalse
        case (.value(let column, let kind), .constant(let value)):
            return try compareColumn(column, kind, op, value, options)
        case (.constant(let value), .value(let column, let kind)):
            if let swapped = op.swapped { return try compareColumn(column, kind, swapped, value, options) }
            return try compareConstant(value, op, column, kind, options)
        case (.value(let a, let aKind), .value(let b, let bKind)):
            return try compareColumns(a, aKind, op, b, bKind, options)
        }
    }

    /// The SQL form of a constant compared with a column of `kind`.
    private enum Bound {
        case null
        case value(StoreValue)
        /// The constant can never equal a value of that kind.
        case mismatch
    }

    private func bind(_ value: PredicateValue, for kind: ValueKind, _ options: ComparisonOptions) throws(CompileError) -> Bound {
        if case .null = value { return .null }
        if dialect == .postgreSQL, let exact = try postgreSQLNumber(value, for: kind) { return .value(exact) }
        switch (kind, value) {
        case (.integer, .int(let v)), (.real, .int(let v)): return .value(.int(v))
        case (.integer, .double(let v)), (.real, .double(let v)):
            // NaN equals nothing and has no order (as in memory); bound, it would be NULL.
            return v.isNaN ? .mismatch : .value(.double(v))
        case (.string, .string(let s)): return .value(.string(PredicateStrings.fold(s, options)))
        case (.date, .date(let d)):
            return d.timeIntervalSinceReferenceDate.isNaN ? .mismatch : .value(.double(d.timeIntervalSinceReferenceDate))
        case (.data, .data(let d)): return .value(.data(d))
        case (.uuid, .uuid(let u)): return .value(.data(Data(PredicateValue.bytes(of: u))))
        case (.url, .url(let u)): return .value(.string(u.absoluteString))
        case (.object(let root), .objectID(let ref)):
            guard let id = ref.object as? NSManagedObjectID else { return .mismatch }
            return primaryKey(id, root: root)
        case (.object(let root), .object(let ref)):
            guard let object = ref.object as? NSManagedObject else { return .mismatch }
            return primaryKey(object.objectID, root: root)
        case (.unsupported(let what), _):
            throw CompileError(reason: "\(what) can only be compared with nil in a fetch")
        default: return .mismatch
        }
    }

    /// The key of `id` in this store's table of `root`; a mismatch for an ID of another entity
    /// family, a temporary one, or one of another store (``store``; the same file opened by
    /// another coordinator is the same store).
    private func primaryKey(_ id: NSManagedObjectID, root: NSEntityDescription) -> Bound {
        guard let key = id.primaryKey, id.entity.rootEntity === root else { return .mismatch }
        if let store, let idStore = id.persistentStore, idStore !== store, idStore.identifier != store.identifier { return .mismatch }
        return .value(.int(key))
    }

    /// The column as compared: folded by `cd_fold` (SQLite) or `cd_fold_v1` (PostgreSQL) for
    /// `[c]`/`[d]` on strings.
    private func folded(_ column: SQLFragment, _ kind: ValueKind, _ options: ComparisonOptions) -> SQLFragment {
        guard kind.isString, !options.isEmpty else { return column }
        if dialect == .postgreSQL { return postgreSQLFolded(column, options) }
        return "cd_fold(" + column + ", \(options.rawValue))"
    }

    private static func sqlOperator(_ op: ComparisonOperator) -> String {
        switch op {
        case .lessThan: return "<"
        case .lessThanOrEqualTo: return "<="
        case .greaterThan: return ">"
        default: return ">="
        }
    }

    private func stringFunction(_ op: ComparisonOperator, _ lhs: SQLFragment, _ rhs: SQLFragment, _ options: ComparisonOptions) throws(CompileError) -> SQLFragment {
        if dialect == .postgreSQL {
            // (The NULL tests read the operands unfolded: a fold is NULL exactly for NULL, and
            // PostgreSQL would run the fold function once more for each.)
            return try postgreSQLStringOperator(op, postgreSQLFolded(lhs, options), postgreSQLFolded(rhs, options), options, unfolded: (lhs, rhs))
        }
        return "cd_strop(\(Self.stringOperatorCode(op)!), " + lhs + ", " + rhs + ", \(options.rawValue))"
    }

    /// `column op constant`.
    private mutating func compareColumn(_ column: SQLFragment, _ kind: ValueKind, _ op: ComparisonOperator, _ value: PredicateValue, _ options: ComparisonOptions) throws(CompileError) -> SQLFragment {
        switch op {
        case .equalTo, .notEqualTo:
            let equal: SQLFragment
            switch try bind(value, for: kind, options) {
            case .null: equal = "(" + column + " IS NULL)"
            case .mismatch: equal = .alwaysFalse
            case .value(.string(let text)) where dialect == .postgreSQL && text.utf8.contains(0):
                // PostgreSQL's text holds no NUL: no row has this value (binding it would fail).
                equal = .alwaysFalse
            case .value(let bound) where dialect == .postgreSQL:
                // Not `IS NOT DISTINCT FROM`, which no index serves; never NULL all the same.
                equal = "(" + column + " IS NOT NULL AND " + folded(column, kind, options) + " = " + SQLFragment.bind(bound) + ")"
            case .value(let bound): equal = "(" + folded(column, kind, options) + dialect.isOperator + SQLFragment.bind(bound) + ")"
            }
            return op == .equalTo ? equal : Self.negate(equal)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard kind.isOrdered, case .value(let bound) = try bind(value, for: kind, options) else { return .alwaysFalse }
            return "(" + column + " IS NOT NULL AND " + ordered(folded(column, kind, options), kind) + " \(Self.sqlOperator(op)) " + SQLFragment.bind(bound) + ")"
        case .between:
            guard case .collection(let bounds) = value, bounds.count == 2 else { return .alwaysFalse }
            let low = try compareColumn(column, kind, .greaterThanOrEqualTo, bounds[0], options)
            let high = try compareColumn(column, kind, .lessThanOrEqualTo, bounds[1], options)
            return Self.and(low, high)
        case .in:
            switch value.dictionaryValues {
            case .collection(let items):
                var bound: [SQLFragment] = []
                var includesNull = false
                for item in items {
                    switch try bind(item, for: kind, options) {
                    case .null: includesNull = true
                    case .mismatch: break
                    case .value(let v): bound.append(.bind(v))
                    }
                }
                let nullTest: SQLFragment = includesNull ? "(" + column + " IS NULL)" : .alwaysFalse
                guard !bound.isEmpty else { return nullTest }
                if dialect == .postgreSQL { return Self.or(nullTest, Self.postgreSQLMembership(column, folded(column, kind, options), bound)) }
                let list = (dialect == .sqlite ? Self.jsonList(bound) : nil) ?? "(" + SQLFragment.joined(bound, separator: ", ") + ")"
                let member = "(" + column + " IS NOT NULL AND " + folded(column, kind, options) + " IN " + list + ")"
                return Self.or(nullTest, member)
            case .string(let text):
                if case .unsupported(let what) = kind { throw CompileError(reason: "\(what) can only be compared with nil in a fetch") }
                guard kind.isString else { return .alwaysFalse }
                return try stringFunction(.in, column, .bind(.string(text)), options)
            default:
                if case .unsupported(let what) = kind { throw CompileError(reason: "\(what) can only be compared with nil in a fetch") }
                return .alwaysFalse
            }
        case .contains, .beginsWith, .endsWith, .like, .matches:
            if case .unsupported(let what) = kind { throw CompileError(reason: "\(what) cannot be searched in a fetch") }
            guard kind.isString, case .string(let text) = value else { return .alwaysFalse }
            return try stringFunction(op, column, .bind(.string(text)), options)
        }
    }

    /// A long `IN` list as one bound value: `(SELECT value FROM json_each(?))` with the values as
    /// a JSON array (blobs as hex text, turned back by `cd_unhex`; text holding NUL, which JSON
    /// text in SQLite cannot carry, as a second array of hex; infinities and NaN bound on their
    /// own, at most three).
    /// SQLite allows at most 32,766 parameters in a statement (by default), and one parameter
    /// prepares and binds faster. `nil` for short lists.
    static func jsonList(_ items: [SQLFragment]) -> SQLFragment? {
        guard items.count > jsonListThreshold else { return nil }
        var json = "["
        var blobs = false
        var textWithNUL = "["
        var nonFinite: [Double] = []
        for item in items {
            switch item.bindings.first {
            case .int(let v)?: json += String(v) + ","
            case .double(let v)? where v.isFinite: json += "\(v),"
            case .double(let v)?: if !nonFinite.contains(where: { $0 == v || ($0.isNaN && v.isNaN) }) { nonFinite.append(v) }
            case .string(let v)? where v.utf8.contains(0): textWithNUL += "\"" + hex(Data(v.utf8)) + "\","
            case .string(let v)?: json += jsonString(v) + ","
            case .data(let v)?:
                blobs = true
                json += "\"" + hex(v) + "\","
            default: return nil
            }
        }
        if json.hasSuffix(",") { json.removeLast() }
        json += "]"
        var list = SQLFragment(blobs ? "(SELECT cd_unhex(value) FROM json_each(" : "(SELECT value FROM json_each(") + .bind(.string(json)) + ")"
        if textWithNUL.count > 1 {
            // JSON text in SQLite cannot hold NUL: such strings come as hex, cast back to text.
            textWithNUL.removeLast()
            list = list + " UNION ALL SELECT CAST(cd_unhex(value) AS TEXT) FROM json_each(" + .bind(.string(textWithNUL + "]")) + ")"
        }
        for value in nonFinite { list = list + " UNION ALL SELECT " + .bind(.double(value)) }   // at most three
        return list + ")"
    }

    /// Lower-case hex digits of `data`.
    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count * 2)
        for byte in data {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 15)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Lists longer than this are bound as one JSON array.
    static let jsonListThreshold = 64

    /// `text` as a JSON string literal.
    private static func jsonString(_ text: String) -> String {
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// `constant op column` for the operators that cannot be swapped.
    private mutating func compareConstant(_ value: PredicateValue, _ op: ComparisonOperator, _ column: SQLFragment, _ kind: ValueKind, _ options: ComparisonOptions) throws(CompileError) -> SQLFragment {
        if case .unsupported(let what) = kind { throw CompileError(reason: "\(what) cannot be compared in a fetch") }
        switch (op, value) {
        case (.contains, .collection):
            // {a, b} CONTAINS column: the column is one of them.
            return try compareColumn(column, kind, .in, value, options)
        case (.in, .string(let text)), (.contains, .string(let text)), (.beginsWith, .string(let text)),
             (.endsWith, .string(let text)), (.like, .string(let text)), (.matches, .string(let text)):
            guard kind.isString else { return .alwaysFalse }
            return try stringFunction(op, .bind(.string(text)), column, options)
        case (.between, _):
            throw CompileError(reason: "BETWEEN needs a key path on its left")
        default:
            return .alwaysFalse
        }
    }

    /// `a op b` for two columns.
    private mutating func compareColumns(_ a: SQLFragment, _ aKind: ValueKind, _ op: ComparisonOperator, _ b: SQLFragment, _ bKind: ValueKind, _ options: ComparisonOptions) throws(CompileError) -> SQLFragment {
        if case .unsupported(let what) = aKind { throw CompileError(reason: "\(what) cannot be compared in a fetch") }
        if case .unsupported(let what) = bKind { throw CompileError(reason: "\(what) cannot be compared in a fetch") }
        let compatible = aKind.isCompatible(with: bKind)
        if dialect == .postgreSQL, aKind.isNumeric, bKind.isNumeric, aKind.isInteger != bKind.isInteger,
           let mixed = postgreSQLMixedComparison(a, aKind, op, b) {
            return mixed
        }
        switch op {
        case .equalTo, .notEqualTo:
            let equal: SQLFragment = compatible
                ? "(" + folded(a, aKind, options) + dialect.isOperator + folded(b, bKind, options) + ")"
                : "(" + a + " IS NULL AND " + b + " IS NULL)"
            return op == .equalTo ? equal : Self.negate(equal)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            guard compatible, aKind.isOrdered else { return .alwaysFalse }
            return "(" + a + " IS NOT NULL AND " + b + " IS NOT NULL AND " + ordered(folded(a, aKind, options), aKind)
                + " \(Self.sqlOperator(op)) " + ordered(folded(b, bKind, options), bKind) + ")"
        case .in, .contains, .beginsWith, .endsWith, .like, .matches:
            guard aKind.isString, bKind.isString else { return .alwaysFalse }
            return try stringFunction(op, a, b, options)
        case .between:
            return .alwaysFalse
        }
    }
}
