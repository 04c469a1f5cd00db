import CSQLite
import Foundation

// Dictionary fetches in one SELECT: columns (attributes, to-one key paths, expressions),
// DISTINCT, GROUP BY, HAVING, ORDER BY, LIMIT, with every value bound.

/// How a selected column of a dictionary fetch becomes a ``StoreValue`` (both SQL stores).
enum DictionaryColumnReader {
    /// As the row decoder reads a property's column (plain key paths, to-one relationships).
    case property(SQLiteRowDecoder.Slot)
    /// A computed value of a kind, converted to a type (`.undefinedAttributeType`: as the
    /// database gives it).
    case computed(PredicateSQLCompiler.ValueKind, NSAttributeType)
}

extension SQLiteStore {
    private typealias ColumnReader = DictionaryColumnReader

    /// The select list of a dictionary plan's columns, compiled by `compiler` (which learns each
    /// column's operand, for sorts and HAVING): the columns, then the subqueries that give a
    /// to-one's exact entity where its destination's table holds several (read from the
    /// position their readers name), and a reader per column. `pk` and `ent` spell `Z_PK` and
    /// `Z_ENT` in the store's SQL. Shared by the SQLite and PostgreSQL stores.
    static func dictionaryColumns(_ plan: DictionaryPlan, compiler: inout PredicateSQLCompiler, schema: SQLiteSchema,
                                  pk: String, ent: String) throws -> (selected: [SQLFragment], entityColumns: [SQLFragment], readers: [DictionaryColumnReader]) {
        var selected: [SQLFragment] = []
        var entityColumns: [SQLFragment] = []
        var readers: [DictionaryColumnReader] = []
        for column in plan.columns {
            let (fragment, kind) = try compiler.compileResultColumn(column)
            let position = Int32(selected.count)
            selected.append(fragment)
            compiler.columnOperands[column.name] = .value(fragment, kind)
            if let attribute = column.attribute {
                readers.append(.property(SQLiteRowDecoder.Slot(index: 0, column: position, kind: SQLiteRowDecoder.kind(of: attribute), entityColumn: -1)))
            } else if case .object(let root) = kind, !column.isAggregate {
                // A to-one relationship: its object ID, with the exact entity when the
                // destination's table holds several.
                var entityColumn: Int32 = -1
                if root.layout.entityNumbers.count > 1 {
                    entityColumn = Int32(plan.columns.count + entityColumns.count)
                    entityColumns.append("(SELECT e.\(ent) FROM \(schema.table(of: root)) e WHERE e.\(pk) = " + fragment + ")")
                }
                readers.append(.property(SQLiteRowDecoder.Slot(index: 0, column: position, kind: .toOne(root), entityColumn: entityColumn)))
            } else {
                readers.append(.computed(kind, column.resultType != .undefinedAttributeType ? column.resultType : naturalType(of: kind)))
            }
        }
        return (selected, entityColumns, readers)
    }

    /// Runs a dictionary plan on a reader connection.
    func readDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        let (query, readers) = try dictionaryQuery(plan)
        return try withReader { db in
            let statement = try readStatement(db, query.sql)
            defer { statement.reset() }
            for (offset, value) in query.bindings.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
            var rows: [ContiguousArray<StoreValue>] = []
            while try statement.step() {
                var row = ContiguousArray<StoreValue>()
                row.reserveCapacity(readers.count)
                for (offset, reader) in readers.enumerated() {
                    let column = Int32(offset)
                    switch reader {
                    case .property(let slot):
                        row.append(statement.isNull(column) ? .null : try decodeValue(slot, statement))
                    case .computed(_, let type):
                        row.append(Self.rawValue(statement, column).converted(to: type))
                    }
                }
                rows.append(row)
            }
            return rows
        }
    }

    /// The value of a column as SQLite holds it.
    private static func rawValue(_ statement: SQLiteStatement, _ column: Int32) -> StoreValue {
        switch statement.columnType(column) {
        case SQLITE_INTEGER: return .int(statement.int64(column))
        case SQLITE_FLOAT: return .double(statement.double(column))
        case SQLITE_TEXT: return .string(statement.string(column))
        case SQLITE_BLOB: return .data(statement.data(column))
        default: return .null
        }
    }

    /// The type a computed column of `kind` is returned as when its description names none.
    static func naturalType(of kind: PredicateSQLCompiler.ValueKind) -> NSAttributeType {
        switch kind {
        case .real: return .doubleAttributeType
        case .string: return .stringAttributeType
        case .date: return .dateAttributeType
        case .data: return .binaryDataAttributeType
        case .uuid: return .UUIDAttributeType
        case .url: return .URIAttributeType
        case .integer, .object, .unsupported: return .undefinedAttributeType
        }
    }

    /// The SELECT of a dictionary plan and how to read each of its columns.
    private func dictionaryQuery(_ plan: DictionaryPlan) throws -> (SQLFragment, [ColumnReader]) {
        let fetch = plan.fetch
        var compiler = PredicateSQLCompiler(entity: fetch.entity, schema: schema, store: self)
        var conditions: [SQLFragment] = []
        if let condition = entityCondition(fetch) { conditions.append(SQLFragment(condition)) }
        if let predicate = fetch.predicate { conditions.append("(" + (try compiler.compile(predicate)) + ")") }

        let (selected, entityColumns, readers) = try Self.dictionaryColumns(plan, compiler: &compiler, schema: schema, pk: "Z_PK", ent: "Z_ENT")

        var groups: [SQLFragment] = []
        for column in plan.groupBy { groups.append(try compiler.compileResultColumn(column).0) }
        let having = try plan.having.map { try compiler.compileHaving($0) }

        var order: [SQLFragment] = []
        for key in plan.fetch.sortKeys {
            guard let column = plan.column(namedBy: key) else {
                order.append(try compiler.orderBy(key))
                continue
            }
            if case .keyPath(let path) = column.expression {
                // A description renaming a key path, by its name.
                var byPath = key
                byPath.path = path
                order.append(try compiler.orderBy(byPath))
            } else if case .value(let fragment, _)? = compiler.columnOperands[column.name] {
                // A computed column, by its name.
                order.append(fragment + (key.ascending ? " ASC" : " DESC"))
            }
        }
        if order.isEmpty && !groups.isEmpty {
            order = groups
        } else if plan.groupBy.isEmpty && !plan.distinct && !plan.columns.contains(where: \.isAggregate) {
            order.append("t0.Z_PK")
        }

        var sql = SQLFragment(plan.distinct ? "SELECT DISTINCT " : "SELECT ") + SQLFragment.joined(selected + entityColumns, separator: ", ")
        sql = sql + " FROM \(schema.table(of: fetch.entity)) t0"
        if !compiler.joins.isEmpty { sql = sql + " " + compiler.joins.joined(separator: " ") }
        if !conditions.isEmpty { sql = sql + " WHERE " + SQLFragment.joined(conditions, separator: " AND ") }
        if !groups.isEmpty { sql = sql + " GROUP BY " + SQLFragment.joined(groups, separator: ", ") }
        if let having { sql = sql + " HAVING " + having }
        if !order.isEmpty { sql = sql + " ORDER BY " + SQLFragment.joined(order, separator: ", ") }
        if let limits = Self.limits(fetch.limit, fetch.offset) { sql = sql + limits }
        return (sql, readers)
    }
}
