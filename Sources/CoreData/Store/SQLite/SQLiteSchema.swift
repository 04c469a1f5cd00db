import Foundation

/// Core Data's SQLite layout for a model: one table per root entity (`Z` + upper-cased name,
/// with `Z_PK`, `Z_ENT`, `Z_OPT` and a `Z`-prefixed column per attribute and to-one
/// relationship), join tables for many-to-many relationships, `Z_FOK_` order columns,
/// `Z_PRIMARYKEY` and `Z_METADATA`.
internal struct SQLiteSchema {
    /// A column of an entity table.
    struct Column {
        var name: String
        var type: String
    }

    /// A root entity's table.
    struct Table {
        var name: String
        var root: NSEntityDescription
        var columns: [Column]
    }

    let tables: [Table]
    let joinTables: [JoinTableSpec]
    let indexes: [String]
    let entities: [NSEntityDescription]

    init(model: NSManagedObjectModel) {
        let entities = model.entities.sorted { $0.layout.entityNumber < $1.layout.entityNumber }
        self.entities = entities
        var tables: [Table] = []
        var indexes: [String] = []
        for root in entities where root.superentity == nil {
            let family = entities.filter { $0.rootEntity === root }
            let table = root.layout.tableName
            // Per entity, root first: attributes by name, then to-one keys by name, each key
            // followed by its extra columns; then a stable sort by type rank, as Apple's store does.
            var columns: [Column] = []
            for entity in family {
                let stored = entity.ownProperties.filter(\.isStoredInRow)
                for case let attribute as NSAttributeDescription in stored.sorted(by: { $0.name < $1.name }) {
                    columns.append(Column(name: attribute.columnName, type: Self.sqlType(attribute.attributeType)))
                    if attribute.isIndexed {
                        indexes.append("CREATE INDEX IF NOT EXISTS \(table)_\(attribute.columnName)_INDEX ON \(table) (\(attribute.columnName))")
                    }
                }
                for case let relationship as NSRelationshipDescription in stored.sorted(by: { $0.name < $1.name }) {
                    columns.append(Column(name: relationship.columnName, type: "INTEGER"))
                    if let entityColumn = relationship.entityColumn { columns.append(Column(name: entityColumn, type: "INTEGER")) }
                    indexes.append("CREATE INDEX IF NOT EXISTS \(table)_\(relationship.columnName)_INDEX ON \(table) (\(relationship.columnName))")
                    // The order column of the ordered to-many that this to-one is the inverse of.
                    if let inverse = relationship.inverseRelationship, let order = inverse.orderColumn {
                        columns.append(Column(name: order, type: "INTEGER"))
                    }
                }
            }
            // Hidden keys of to-many relationships without an inverse that point into this family.
            for entity in entities {
                for case let relationship as NSRelationshipDescription in entity.ownProperties {
                    guard let hidden = relationship.hiddenForeignKeyColumn, let destination = relationship.destinationEntity,
                          destination.rootEntity === root else { continue }
                    columns.append(Column(name: hidden, type: "INTEGER"))
                    if let order = relationship.orderColumn { columns.append(Column(name: order, type: "INTEGER")) }
                    indexes.append("CREATE INDEX IF NOT EXISTS \(table)_\(hidden)_INDEX ON \(table) (\(hidden))")
                }
            }
            let ranked = columns.enumerated().sorted { a, b in
                let (ra, rb) = (Self.rank(a.element.type), Self.rank(b.element.type))
                return ra != rb ? ra < rb : a.offset < b.offset
            }.map(\.element)
            let header = [Column(name: "Z_PK", type: "INTEGER PRIMARY KEY"), Column(name: "Z_ENT", type: "INTEGER"),
                          Column(name: "Z_OPT", type: "INTEGER")]
            tables.append(Table(name: table, root: root, columns: header + ranked))
            if family.count > 1 {
                indexes.append("CREATE INDEX IF NOT EXISTS \(table)_Z_ENT_INDEX ON \(table) (Z_ENT)")
            }
            for entity in family {
                let name = entity.name ?? ""
                for index in entity.indexes {
                    let columns = index.elements.compactMap { element -> String? in
                        guard let propertyName = element.property?.name ?? element.propertyName,
                              let property = entity.layout.propertiesByName[propertyName], property.isStoredInRow else { return nil }
                        return property.columnName + " COLLATE BINARY " + (element.isAscending ? "ASC" : "DESC")
                    }
                    guard !columns.isEmpty else { continue }
                    indexes.append("CREATE INDEX IF NOT EXISTS Z_\(name)_\(index.name) ON \(table) (\(columns.joined(separator: ", ")))")
                }
                for constraint in entity.uniquenessConstraints where entity.superentity == nil || !entity.uniquenessConstraints.isEmpty {
                    let names = constraint.compactMap { ($0 as? String) ?? ($0 as? NSPropertyDescription)?.name }
                    let properties = names.compactMap { entity.layout.propertiesByName[$0] }.filter(\.isStoredInRow)
                    guard !properties.isEmpty, properties.count == names.count else { continue }
                    let columns = properties.map { $0.columnName + " COLLATE BINARY ASC" }
                    let conditions = family.count > 1 && entity.layout.entityNumbers.count != family.count
                        ? " WHERE Z_ENT IN (" + entity.layout.entityNumbers.map(String.init).joined(separator: ", ") + ")" : ""
                    indexes.append("CREATE UNIQUE INDEX IF NOT EXISTS Z_\(name)_UNIQUE_\(names.joined(separator: "_")) ON \(table) (\(columns.joined(separator: ", ")))\(conditions)")
                }
            }
        }
        // Join tables: the owning side's column first, then the other, then order columns.
        var joins: [String: JoinTableSpec] = [:]
        for entity in entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                guard let join = relationship.joinTable else { continue }
                var spec = joins[join.name] ?? JoinTableSpec(name: join.name, first: "", second: "", orderColumns: [])
                if join.isOwner {
                    spec.first = join.sourceColumn
                    spec.second = join.destinationColumn
                    if let order = join.orderColumn { spec.orderColumns.insert(order, at: 0) }
                } else {
                    if spec.first.isEmpty { spec.first = join.destinationColumn; spec.second = join.sourceColumn }
                    if let order = join.orderColumn { spec.orderColumns.append(order) }
                }
                joins[join.name] = spec
            }
        }
        self.tables = tables
        self.joinTables = joins.values.sorted { $0.name < $1.name }
        self.indexes = indexes
    }

    /// A many-to-many join table.
    struct JoinTableSpec {
        var name: String
        var first: String
        var second: String
        var orderColumns: [String]
    }

    /// Apple's column order: integers and keys, then floats and dates, decimals, strings, blobs.
    static func rank(_ type: String) -> Int {
        switch type {
        case "INTEGER": return 0
        case "FLOAT", "TIMESTAMP": return 1
        case "DECIMAL": return 2
        case "VARCHAR": return 3
        default: return 4
        }
    }

    /// The declared SQL type Core Data uses for an attribute type.
    static func sqlType(_ type: NSAttributeType) -> String {
        switch type {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType: return "INTEGER"
        case .doubleAttributeType, .floatAttributeType: return "FLOAT"
        case .decimalAttributeType: return "DECIMAL"
        case .stringAttributeType, .URIAttributeType, .objectIDAttributeType: return "VARCHAR"
        case .dateAttributeType: return "TIMESTAMP"
        case .binaryDataAttributeType, .UUIDAttributeType, .transformableAttributeType,
             .undefinedAttributeType, .compositeAttributeType: return "BLOB"
        }
    }

    /// The statements that create the whole schema.
    var createStatements: [String] {
        var sql: [String] = []
        for table in tables {
            sql.append("CREATE TABLE \(table.name) ( " + table.columns.map { "\($0.name) \($0.type)" }.joined(separator: ", ") + " )")
        }
        for join in joinTables {
            let columns = ["\(join.first) INTEGER", "\(join.second) INTEGER"] + join.orderColumns.map { "\($0) INTEGER" }
            sql.append("CREATE TABLE \(join.name) ( " + columns.joined(separator: ", ") + ", PRIMARY KEY (\(join.first), \(join.second)) )")
            sql.append("CREATE INDEX IF NOT EXISTS \(join.name)_\(join.second)_INDEX ON \(join.name) (\(join.second), \(join.first))")
        }
        sql.append(contentsOf: indexes)
        sql.append("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        sql.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        sql.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        return sql
    }
}
