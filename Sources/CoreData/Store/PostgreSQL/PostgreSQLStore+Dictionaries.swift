import Foundation

// Dictionary fetches (`.dictionaryResultType`) in one SELECT, as the SQLite store makes them
// (`SQLiteStore+Dictionaries.swift`): columns (attributes, to-one key paths, expressions,
// aggregates), DISTINCT, GROUP BY, HAVING, ORDER BY, LIMIT, every value bound. PostgreSQL's
// differences: strings group and sort byte by byte and `NULL` first ascending (as the
// dialect's sorts); a sorted DISTINCT wraps its query and sorts by the wrapped columns
// (`SELECT * FROM (SELECT DISTINCT … AS c1 …) q ORDER BY q.c1 …`: PostgreSQL's DISTINCT refuses
// to sort by what it does not select, byte order included); computed values come back as text
// and are read by the kind of value the compiler says they hold.

extension PostgreSQLStore {
    private typealias ColumnReader = DictionaryColumnReader

    /// The rows of a dictionary plan, one value per column.
    func selectDictionaryRows(_ plan: DictionaryPlan) throws -> [ContiguousArray<StoreValue>] {
        let (query, readers) = try dictionaryQuery(plan)
        let sql = PredicateSQLCompiler.Dialect.numberedParameters(query.sql)
        return try read { connection in
            let rows = try connection.execute(sql, query.bindings.map(parameter))
            return (0..<rows.count).map { row in
                var values = ContiguousArray<StoreValue>()
                values.reserveCapacity(readers.count)
                for (column, reader) in readers.enumerated() {
                    switch reader {
                    case .property(let slot):
                        values.append(rows.isNull(row, column) ? .null : value(slot, rows, row))
                    case .computed(let kind, let type):
                        values.append(rows.isNull(row, column) ? .null : Self.computedValue(kind, rows, row, column).converted(to: type))
                    }
                }
                return values
            }
        }
    }

    /// A computed value as the kind it holds (an integer too large for `Int64`, a sum in
    /// `numeric`, as a double).
    private static func computedValue(_ kind: PredicateSQLCompiler.ValueKind, _ rows: any PostgreSQLRows, _ row: Int, _ column: Int) -> StoreValue {
        switch kind {
        case .integer, .object:
            let text = rows.text(row, column)
            return Int64(text).map(StoreValue.int) ?? Double(text).map(StoreValue.double) ?? .null
        case .real, .date: return .double(rows.double(row, column))
        case .string, .url: return .string(rows.text(row, column))
        case .data, .uuid: return .data(rows.bytes(row, column))
        case .unsupported: return .null
        }
    }

    /// An `ORDER BY` term for a computed or grouped column: strings byte by byte, `NULL` first
    /// ascending and last descending.
    private static func orderTerm(_ fragment: SQLFragment, _ kind: PredicateSQLCompiler.ValueKind, ascending: Bool) -> SQLFragment {
        fragment + (kind.isString ? " COLLATE \"C\"" : "") + (ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
    }

    /// A compiled condition as PostgreSQL takes it (`TRUE`/`FALSE` for a constant one), in parentheses.
    private static func condition(_ fragment: SQLFragment) -> SQLFragment {
        "(" + SQLFragment(PredicateSQLCompiler.Dialect.postgreSQL.condition(fragment.sql), fragment.bindings) + ")"
    }

    /// The SELECT of a dictionary plan (with `?` placeholders) and how to read each column.
    private func dictionaryQuery(_ plan: DictionaryPlan) throws -> (SQLFragment, [ColumnReader]) {
        let fetch = plan.fetch
        var compiler = PredicateSQLCompiler(entity: fetch.entity, schema: schema, dialect: .postgreSQL, store: self)
        var conditions: [SQLFragment] = []
        let entities = schema.entityCondition(of: fetch.entity, includingSubentities: fetch.includesSubentities)
        if !entities.coversFamily {
            let numbers = schema.numbers(of: fetch.entity, includingSubentities: fetch.includesSubentities)
            conditions.append(SQLFragment("t0.\(Self.ent) IN (" + numbers.map(String.init).joined(separator: ", ") + ")"))
        }
        if let predicate = fetch.predicate {
            let fragment = try compiler.compile(predicate)
            conditions.append(Self.condition(fragment))
        }

        let (selected, entityColumns, readers) = try SQLiteStore.dictionaryColumns(plan, compiler: &compiler, schema: schema, pk: Self.pk, ent: Self.ent)

        var groups: [SQLFragment] = []
        var groupOrder: [SQLFragment] = []
        for column in plan.groupBy {
            let (fragment, kind) = try compiler.compileResultColumn(column)
            groups.append(fragment)
            groupOrder.append(Self.orderTerm(fragment, kind, ascending: true))
        }
        let aggregates = plan.columns.contains(where: \.isAggregate)
        let having = try plan.having.map { try compiler.compileHaving($0) }

        var order: [SQLFragment] = []
        if plan.distinct {
            // Sorted by the fetched columns only, which the outer query names (`q.c1`):
            // PostgreSQL's DISTINCT cannot sort by an expression it does not select.
            order = try distinctOrder(plan, compiler: compiler)
        } else {
            for key in fetch.sortKeys {
                guard let column = plan.column(namedBy: key) else {
                    order.append(try compiler.orderBy(key))
                    continue
                }
                if case .keyPath(let path) = column.expression {
                    // A description renaming a key path, by its name.
                    var byPath = key
                    byPath.path = path
                    order.append(try compiler.orderBy(byPath))
                } else if case .value(let fragment, let kind)? = compiler.columnOperands[column.name] {
                    // A computed column, by its name.
                    order.append(Self.orderTerm(fragment, kind, ascending: key.ascending))
                }
            }
            if order.isEmpty && !plan.groupBy.isEmpty {
                order = groupOrder
            } else if groups.isEmpty && !aggregates {
                order.append(SQLFragment("t0.\(Self.pk)"))
            }
        }

        let wrapped = plan.distinct && !order.isEmpty
        var columns = selected + entityColumns
        if wrapped { columns = columns.enumerated().map { $0.element + " AS c\($0.offset + 1)" } }
        var sql = SQLFragment(plan.distinct ? "SELECT DISTINCT " : "SELECT ") + SQLFragment.joined(columns, separator: ", ")
        sql = sql + " FROM \(schema.table(of: fetch.entity)) t0"
        if !compiler.joins.isEmpty { sql = sql + " " + compiler.joins.joined(separator: " ") }
        if !conditions.isEmpty { sql = sql + " WHERE " + SQLFragment.joined(conditions, separator: " AND ") }
        if !groups.isEmpty { sql = sql + " GROUP BY " + SQLFragment.joined(groups, separator: ", ") }
        if let having { sql = sql + " HAVING " + Self.condition(having) }
        if wrapped { sql = "SELECT * FROM (" + sql + ") q" }
        if !order.isEmpty { sql = sql + " ORDER BY " + SQLFragment.joined(order, separator: ", ") }
        return (sql + Self.limit(fetch), readers)
    }

    /// The `ORDER BY` of a distinct fetch, over the columns of the query it wraps (`q.c1`, …):
    /// the sort descriptors', or else the groups' (ascending), each of which must be fetched
    /// (``DictionaryPlan/checkDistinctOrder()``).
    private func distinctOrder(_ plan: DictionaryPlan, compiler: PredicateSQLCompiler) throws -> [SQLFragment] {
        try plan.checkDistinctOrder()
        func term(_ index: Int, _ key: SortKey) throws -> SQLFragment {
            guard case .value(_, let kind)? = compiler.columnOperands[plan.columns[index].name] else { return SQLFragment("q.c\(index + 1)") }
            return SQLFragment(try compiler.postgreSQLOrderTerm("q.c\(index + 1)", kind, key))
        }
        if !plan.fetch.sortKeys.isEmpty {
            return try plan.fetch.sortKeys.map { key in try term(plan.columnIndex(sortedBy: key)!, key) }
        }
        return try (plan.groupColumnIndexes ?? []).map { index in try term(index, SortKey(path: [plan.columns[index].name], ascending: true)) }
    }
}
