import Foundation

/// Core Data's layout as PostgreSQL DDL: the tables, columns and `Z_ENT` numbers the SQLite
/// store gives a new file (``SQLiteSchema/init(model:)``), every name quoted (so `"ZCAR"` keeps
/// its case), with PostgreSQL types:
///
/// | Core Data | PostgreSQL |
/// |---|---|
/// | `Z_PK`, to-one keys, hidden keys, order columns | `bigint` |
/// | `Z_ENT`, `Z_OPT`, a to-one's entity column | `integer` |
/// | Integer 16 / 32 / 64 | `smallint` / `integer` / `bigint` |
/// | Boolean | `integer` (0 or 1, as SQLite keeps them, so predicates compile alike) |
/// | Double, Float | `double precision` |
/// | Decimal | `numeric` (exact: `Decimal` is decimal, as `numeric` is; a double would round) |
/// | String, URI, object ID | `text` |
/// | Date | `double precision`, seconds since 2001-01-01 (as Core Data keeps them) |
/// | Binary data, UUID, transformable | `bytea` (binary data is kept in the row, also with external storage) |
///
/// Join tables of many-to-many relationships have a primary key on their two columns and an
/// index on the second; to-one keys and indexed attributes have indexes; each uniqueness
/// constraint is a unique index (over the constrained entity's `Z_ENT` numbers when its table
/// holds other entities). `Z_PRIMARYKEY` and `Z_METADATA` (the metadata as a binary plist) as
/// in SQLite.
internal struct PostgreSQLLayout {
    let schema: SQLiteSchema

    /// Runs the DDL and fills `Z_PRIMARYKEY`, in the caller's transaction.
    func create(on connection: any PostgreSQLConnection) throws {
        try connection.run(statements.joined(separator: ";\n"))
        for entity in schema.entities {
            _ = try connection.execute("""
                INSERT INTO "Z_PRIMARYKEY" ("Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX") VALUES ($1, $2, $3, 0)
                """, [.int(Int64(schema.number(of: entity))), .text(entity.name ?? ""),
                      .int(Int64(entity.superentity.map { schema.number(of: $0) } ?? 0))])
        }
    }

    private static func q(_ name: String) -> String { SQLiteSchema.quoted(name) }

    /// An index's name as PostgreSQL keeps it: unchanged up to 63 bytes (its limit, beyond which
    /// it cuts names, so that two long names sharing their first 63 bytes collided); a longer one
    /// cut to 54 bytes and ended with 8 hex digits of a hash of the whole name.
    ///
    /// ```swift
    /// PostgreSQLLayout.indexName("ZCAR_ZOWNER_INDEX")   // "ZCAR_ZOWNER_INDEX"
    /// PostgreSQLLayout.indexName("ZPATIENTMEDICATIONADMINISTRATIONRECORD_ZSCHEDULEDADMINISTRATIONNURSE_INDEX")
    /// // "ZPATIENTMEDICATIONADMINISTRATIONRECORD_ZSCHEDULEDADMINI_" and 8 hex digits
    /// ```
    static func indexName(_ name: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var hash: UInt32 = 2_166_136_261 // FNV-1a: stable across runs and machines
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        var prefix = ""
        for character in name {
            guard prefix.utf8.count + character.utf8.count <= 54 else { break }
            prefix.append(character)
        }
        return prefix + "_" + String(format: "%08X", hash)
    }

    /// Every statement of a new store, in order.
    var statements: [String] {
        var sql: [String] = []
        for table in schema.tables {
            sql.append(createStatement(table))
            sql.append(contentsOf: indexes(of: table))
        }
        for join in schema.joinTables {
            sql.append(Self.createStatement(join))
            sql.append(Self.indexStatement(join))
        }
        sql.append("CREATE TABLE \"Z_PRIMARYKEY\" (\"Z_ENT\" integer PRIMARY KEY, \"Z_NAME\" text, \"Z_SUPER\" integer, \"Z_MAX\" bigint)")
        sql.append("CREATE TABLE \"Z_METADATA\" (\"Z_VERSION\" integer PRIMARY KEY, \"Z_UUID\" text, \"Z_PLIST\" bytea)")
        return sql
    }

    /// Every index of a new store (of entity tables and join tables), in order.
    var indexStatements: [String] {
        schema.tables.flatMap(indexes(of:)) + schema.joinTables.map(Self.indexStatement)
    }

    /// The `CREATE TABLE` of an entity table.
    func createStatement(_ table: SQLiteSchema.Table) -> String {
        let types = columnTypes(of: table.root)
        let columns = table.columns.map { "\(Self.q($0.name)) \(Self.type(of: $0, in: types))" }
        return "CREATE TABLE \(Self.q(table.name)) (\(columns.joined(separator: ", ")))"
    }

    /// The type of `column` of `table`, as an added column gets it (without `PRIMARY KEY`).
    func columnType(_ column: SQLiteSchema.Column, of table: SQLiteSchema.Table) -> String {
        Self.type(of: column, in: columnTypes(of: table.root)).replacingOccurrences(of: " PRIMARY KEY", with: "")
    }

    private static func type(of column: SQLiteSchema.Column, in types: [String: String]) -> String {
        switch column.name {
        case "Z_PK": return "bigint PRIMARY KEY"
        case "Z_ENT", "Z_OPT": return "integer"
        default: return types[column.name] ?? "bigint"
        }
    }

    /// The `CREATE TABLE` of a join table: its two key columns the primary key.
    static func createStatement(_ join: SQLiteSchema.JoinTableSpec) -> String {
        let (first, second) = (q(join.first), q(join.second))
        let columns = ["\(first) bigint", "\(second) bigint"] + join.orderColumns.map { "\(q($0)) bigint" }
        return "CREATE TABLE \(q(join.name)) (\(columns.joined(separator: ", ")), PRIMARY KEY (\(first), \(second)))"
    }

    /// The index on a join table's second column.
    static func indexStatement(_ join: SQLiteSchema.JoinTableSpec) -> String {
        "CREATE INDEX \(q(indexName("\(join.name)_\(join.second)_INDEX"))) ON \(q(join.name)) (\(q(join.second)), \(q(join.first)))"
    }

    /// The PostgreSQL type of each attribute column and to-one entity column of `root`'s table, by
    /// column name (other columns hold keys: `bigint`).
    private func columnTypes(of root: NSEntityDescription) -> [String: String] {
        var types: [String: String] = [:]
        for entity in schema.entities where entity.rootEntity === root {
            for property in entity.ownLayoutProperties where property.isStoredInRow {
                if let attribute = property as? NSAttributeDescription {
                    let type = Self.type(of: attribute.attributeType)
                    // Strings compare and sort byte by byte (SQLite's BINARY) whatever the
                    // database's collation, so their indexes serve the predicates' comparisons.
                    types[attribute.columnName] = type == "text" ? "text COLLATE \"C\"" : type
                } else if let entityColumn = (property as? NSRelationshipDescription)?.entityColumn {
                    types[entityColumn] = "integer"
                }
            }
        }
        return types
    }

    /// The column type of an attribute type (see the table above).
    static func type(of attributeType: NSAttributeType) -> String {
        switch attributeType {
        case .integer16AttributeType: return "smallint"
        case .integer32AttributeType, .booleanAttributeType: return "integer"
        case .integer64AttributeType: return "bigint"
        case .doubleAttributeType, .floatAttributeType, .dateAttributeType: return "double precision"
        case .decimalAttributeType: return "numeric"
        case .stringAttributeType, .URIAttributeType, .objectIDAttributeType: return "text"
        case .binaryDataAttributeType, .UUIDAttributeType, .transformableAttributeType,
             .undefinedAttributeType, .compositeAttributeType: return "bytea"
        }
    }

    /// The indexes of an entity table: `Z_ENT` (a table of several entities), to-one and hidden
    /// keys, indexed attributes, and the unique indexes of uniqueness constraints.
    private func indexes(of table: SQLiteSchema.Table) -> [String] {
        let name = table.name
        var sql: [String] = []
        func index(_ columns: [String], unique: Bool = false, named indexName: String, where condition: String = "") {
            sql.append("CREATE \(unique ? "UNIQUE " : "")INDEX \(Self.q(Self.indexName(indexName))) ON \(Self.q(name)) (\(columns.map(Self.q).joined(separator: ", ")))\(condition)")
        }
        let family = schema.entities.filter { $0.rootEntity === table.root }
        if family.count > 1 { index(["Z_ENT"], named: "\(name)_Z_ENT_INDEX") }
        for entity in family {
            for property in entity.ownLayoutProperties.sorted(by: { $0.name < $1.name }) where property.isStoredInRow {
                if let attribute = property as? NSAttributeDescription, attribute.isIndexed {
                    index([attribute.columnName], named: "\(name)_\(attribute.columnName)_INDEX")
                } else if let relationship = property as? NSRelationshipDescription {
                    index([relationship.columnName], named: "\(name)_\(relationship.columnName)_INDEX")
                }
            }
        }
        // The entities' fetch indexes (`NSFetchIndexDescription`), named as Apple's SQLite store
        // names them (`Z_<entity>_<index>`).
        for entity in family {
            for fetchIndex in entity.indexes {
                let columns = fetchIndex.elements.compactMap { element -> String? in
                    guard let propertyName = entity.name(ofIndexElement: element),
                          let property = entity.layout.property(named: propertyName), property.isStoredInRow else { return nil }
                    return Self.q(property.columnName) + (element.isAscending ? " ASC" : " DESC")
                }
                guard !columns.isEmpty else { continue }
                sql.append("CREATE INDEX \(Self.q(Self.indexName("Z_\(entity.name ?? "")_\(fetchIndex.name)"))) ON \(Self.q(name)) (\(columns.joined(separator: ", ")))")
            }
        }
        for entity in schema.entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                guard let hidden = relationship.hiddenForeignKeyColumn, relationship.destinationEntity?.rootEntity === table.root else { continue }
                index([hidden], named: "\(name)_\(hidden)_INDEX")
            }
        }
        for entity in family {
            for constraint in entity.uniquenessConstraints {
                let names = entity.names(ofConstraint: constraint)
                let properties = names.compactMap { entity.layout.property(named: $0) }.filter(\.isStoredInRow)
                guard !properties.isEmpty, properties.count == names.count else { continue }
                let numbers = schema.numbers(of: entity, includingSubentities: true)
                let condition = numbers.count == family.count ? "" : " WHERE \"Z_ENT\" IN (" + numbers.map(String.init).joined(separator: ", ") + ")"
                index(properties.map(\.columnName), unique: true, named: "Z_\(entity.name ?? "")_UNIQUE_\(names.joined(separator: "_"))", where: condition)
            }
        }
        return sql
    }
}
