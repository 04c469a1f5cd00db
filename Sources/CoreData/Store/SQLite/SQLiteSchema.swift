import Foundation

/// Where a model's entities, properties and relationships live in one SQLite file, in Core
/// Data's layout: one table per root entity (`Z` + upper-cased name, with `Z_PK`, `Z_ENT`,
/// `Z_OPT` and a `Z`-prefixed column per attribute and to-one relationship), join tables for
/// many-to-many relationships, `Z_FOK_` order columns, `Z_PRIMARYKEY` and `Z_METADATA`.
///
/// A new file gets the names Apple's store derives from the model (``init(model:)``, which also
/// writes the DDL). An existing file's own tables and columns are the truth
/// (``init(model:reading:)`` in `SQLiteSchema+File.swift`): Apple's names carry history a model
/// cannot tell (numbered columns, `1`-suffixed join columns, a self-referential join table named
/// after either side, `Z_ENT` numbers from `Z_PRIMARYKEY`).
///
/// Every name the store puts into SQL comes from here, quoted (``quoted(_:)``); the DDL of a new
/// file writes a plain identifier bare, as Apple's file does, and quotes any other.
///
/// A class, read-only once made: the store and each query's compiler share one (a struct of
/// arrays would be copied, its arrays retained, at every use).
internal final class SQLiteSchema: @unchecked Sendable {
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

    /// A many-to-many join table: `first` and `second` are its key columns (the owning side's
    /// first), holding keys of the root entities `firstRoot` and `secondRoot`.
    struct JoinTableSpec {
        var name: String
        var first: String
        var second: String
        var orderColumns: [String]
        var firstRoot: ObjectIdentifier?
        var secondRoot: ObjectIdentifier?
    }

    /// Where one entity's rows live in this file. Names are quoted, ready for SQL.
    struct EntityStorage {
        /// The entity's `Z_ENT` in this file.
        var number: Int
        /// The root entity's table.
        var table: String
        /// The column of each property stored in the row, by property index (`nil` for the others).
        var columns: [String?]
        /// For a to-one relationship whose destination has sub-entities: the column holding the
        /// destination's `Z_ENT`, by property index.
        var entityColumns: [String?]
        /// The indexes of the attributes kept with external binary storage (`SQLiteExternalData.swift`).
        var externalIndexes: [Int] = []
        /// The indexes of properties stored in rows that have no column in this file (a file of
        /// another model version opened with `NSIgnorePersistentStoreVersioningOption`): they read
        /// as nil, and a save that gives one a value throws.
        var unmappedIndexes: [Int] = []

        init(number: Int, table: String, columns: [String?], entityColumns: [String?], entity: NSEntityDescription) {
            self.number = number
            self.table = table
            self.columns = columns
            self.entityColumns = entityColumns
            let layout = entity.layout
            externalIndexes = layout.attributeIndexes.filter { index in
                guard let attribute = layout.properties[index] as? NSAttributeDescription else { return false }
                return attribute.storesExternally && columns[index] != nil
            }
            unmappedIndexes = layout.rowIndexes.filter { columns[$0] == nil }
        }
    }

    /// Where the members of a to-many relationship are found. Names are quoted, ready for SQL.
    enum ToManyStorage {
        /// A join table: `source` holds the owner's keys, `destination` the members'; `order`
        /// the member's position for an ordered relationship.
        case join(table: String, source: String, destination: String, order: String?)
        /// A column of the destination's table holding the owner's key: the inverse to-one's
        /// foreign key, or (`hidden`) the key of a relationship without an inverse.
        case foreignKey(column: String, order: String?, hidden: Bool)
    }

    /// Every entity of the model, in the model's `Z_ENT` order.
    let entities: [NSEntityDescription]
    /// The entity tables, with the columns the store reads (for a new file, its DDL).
    var tables: [Table] = []
    var joinTables: [JoinTableSpec] = []
    /// The indexes of a new file.
    var indexes: [String] = []
    /// Each entity's storage, by the model's entity number (``EntityLayout/entityNumber``).
    var storage: [EntityStorage?] = []
    /// Each to-many relationship's storage, by relationship.
    var toMany: [ObjectIdentifier: ToManyStorage] = [:]
    /// Entities by their `Z_ENT` in this file (index 0 unused).
    var entitiesByNumber: [NSEntityDescription?] = []
    /// Whether an entity keeps an attribute with external binary storage: read by every save,
    /// so set once, with ``storage``.
    var hasExternalData = false

    /// `name` as a quoted SQL identifier: `"ZNAME"` (a `"` inside is doubled).
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `name` as the DDL of a new file writes it: bare when it is a plain identifier (letters,
    /// digits and `_`, not starting with a digit; Core Data's names all start with `Z`, so
    /// none is a keyword), as Apple's store writes it; quoted otherwise.
    static func ddlName(_ name: String) -> String {
        let plain = !name.isEmpty && name.first.map({ !$0.isNumber }) == true
            && name.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil)) || $0 == "_" }
        return plain && name.uppercased().hasPrefix("Z") ? name : quoted(name)
    }

    // MARK: Looking up names

    /// The storage of `entity`.
    func storage(of entity: NSEntityDescription) -> EntityStorage {
        storage[entity.layout.entityNumber]!
    }
    /// The quoted table of `entity`'s rows.
    func table(of entity: NSEntityDescription) -> String { storage[entity.layout.entityNumber]!.table }
    /// `entity`'s `Z_ENT` in this file.
    func number(of entity: NSEntityDescription) -> Int { storage[entity.layout.entityNumber]!.number }
    /// The quoted column of a property stored in its entity's row (`nil` if this file has none:
    /// see ``EntityStorage/unmappedIndexes``).
    func column(of property: NSPropertyDescription) -> String? {
        storage[property.entity!.layout.entityNumber]!.columns[property.index]
    }

    /// The error of a request that needs a column or table this file lacks.
    static func unmapped(_ property: NSPropertyDescription) -> NSError {
        CoreDataError.make(.incompatibleSchema,
            "The store has no column or table for \(property.entity?.name ?? "").\(property.name) (it was opened with NSIgnorePersistentStoreVersioningOption and was written by another version of the model)")
    }
    /// The quoted column of a to-one relationship's destination `Z_ENT`, if it has one.
    func entityColumn(of relationship: NSRelationshipDescription) -> String? {
        storage[relationship.entity!.layout.entityNumber]!.entityColumns[relationship.index]
    }
    /// Where a to-many relationship's members are found (`nil` for a transient one).
    func toManyStorage(of relationship: NSRelationshipDescription) -> ToManyStorage? {
        toMany[ObjectIdentifier(relationship)]
    }
    /// Every column of an attribute kept with external binary storage, with its table (quoted).
    var externalDataColumns: [(table: String, column: String)] {
        var seen = Set<String>()
        var result: [(table: String, column: String)] = []
        for case let storage? in storage {
            for index in storage.externalIndexes {
                let column = storage.columns[index]!
                if seen.insert(storage.table + "." + column).inserted { result.append((storage.table, column)) }
            }
        }
        return result
    }

    /// The entity whose `Z_ENT` in this file is `number`.
    func entity(numbered number: Int64) -> NSEntityDescription? {
        number >= 0 && number < entitiesByNumber.count ? entitiesByNumber[Int(number)] : nil
    }
    /// `Z_ENT` numbers in this file of `entity` and, if `includingSubentities`, of its sub-entities.
    func numbers(of entity: NSEntityDescription, includingSubentities: Bool) -> [Int] {
        includingSubentities ? entity.layout.descendants.map { number(of: $0) } : [number(of: entity)]
    }

    /// A query's condition on `Z_ENT` (`t0.Z_ENT IN (…)`) for `entity`'s rows, and whether they are
    /// all the rows of its table's family (no condition is then needed); made once per entity.
    struct EntityCondition {
        var sql: String
        var coversFamily: Bool
    }
    private var entityConditions: [ObjectIdentifier: (all: EntityCondition, own: EntityCondition)] = [:]

    func entityCondition(of entity: NSEntityDescription, includingSubentities: Bool) -> EntityCondition {
        let conditions = entityConditions[ObjectIdentifier(entity)]!
        return includingSubentities ? conditions.all : conditions.own
    }

    /// Makes ``entityCondition(of:includingSubentities:)``'s conditions, once the numbers are known.
    func makeEntityConditions() {
        for entity in entities {
            let family = entities.count { $0.rootEntity === entity.rootEntity }
            func condition(_ includingSubentities: Bool) -> EntityCondition {
                let numbers = self.numbers(of: entity, includingSubentities: includingSubentities)
                return EntityCondition(sql: "t0.Z_ENT IN (" + numbers.map(String.init).joined(separator: ", ") + ")",
                                       coversFamily: numbers.count == family)
            }
            entityConditions[ObjectIdentifier(entity)] = (condition(true), condition(false))
        }
    }

    // MARK: A new file

    /// The layout of a new file for `model`: Apple's derived names (``EntityLayout``,
    /// ``RelationshipStorage``), its tables, indexes and `Z_ENT` numbers.
    init(model: NSManagedObjectModel) {
        let entities = model.entities.sorted { $0.layout.entityNumber < $1.layout.entityNumber }
        self.entities = entities
        for root in entities where root.superentity == nil {
            let family = entities.filter { $0.rootEntity === root }
            let table = root.layout.tableName
            // Per entity, root first: attributes by name, then to-one keys by name, each key
            // followed by its extra columns; then a stable sort by type rank, as Apple's store does.
            var columns: [Column] = []
            for entity in family {
                let stored = entity.ownLayoutProperties.filter(\.isStoredInRow)
                for case let attribute as NSAttributeDescription in stored.sorted(by: { $0.name < $1.name }) {
                    columns.append(Column(name: attribute.columnName, type: Self.sqlType(attribute.attributeType)))
                    if attribute.isIndexed {
                        indexes.append(index(table: table, name: "\(table)_\(attribute.columnName)_INDEX", columns: [attribute.columnName]))
                    }
                }
                for case let relationship as NSRelationshipDescription in stored.sorted(by: { $0.name < $1.name }) {
                    columns.append(Column(name: relationship.columnName, type: "INTEGER"))
                    if let entityColumn = relationship.entityColumn { columns.append(Column(name: entityColumn, type: "INTEGER")) }
                    indexes.append(index(table: table, name: "\(table)_\(relationship.columnName)_INDEX", columns: [relationship.columnName]))
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
                    indexes.append(index(table: table, name: "\(table)_\(hidden)_INDEX", columns: [hidden]))
                }
            }
            let ranked = columns.enumerated().sorted { a, b in
                let (ra, rb) = (Self.rank(a.element.type), Self.rank(b.element.type))
                return ra != rb ? ra < rb : a.offset < b.offset
            }.map(\.element)
            tables.append(Table(name: table, root: root, columns: Self.header + ranked))
            if family.count > 1 {
                indexes.append(index(table: table, name: "\(table)_Z_ENT_INDEX", columns: ["Z_ENT"]))
            }
            for entity in family {
                let name = entity.name ?? ""
                for index in entity.indexes {
                    let columns = index.elements.compactMap { element -> String? in
                        guard let propertyName = entity.name(ofIndexElement: element),
                              let property = entity.layout.property(named: propertyName), property.isStoredInRow else { return nil }
                        return Self.ddlName(property.columnName) + " COLLATE BINARY " + (element.isAscending ? "ASC" : "DESC")
                    }
                    guard !columns.isEmpty else { continue }
                    indexes.append("CREATE INDEX IF NOT EXISTS \(Self.ddlName("Z_\(name)_\(index.name)")) ON \(Self.ddlName(table)) (\(columns.joined(separator: ", ")))")
                }
                for constraint in entity.uniquenessConstraints where entity.superentity == nil || !entity.uniquenessConstraints.isEmpty {
                    let names = entity.names(ofConstraint: constraint)
                    let properties = names.compactMap { entity.layout.property(named: $0) }.filter(\.isStoredInRow)
                    guard !properties.isEmpty, properties.count == names.count else { continue }
                    let columns = properties.map { Self.ddlName($0.columnName) + " COLLATE BINARY ASC" }
                    let conditions = family.count > 1 && entity.layout.entityNumbers.count != family.count
                        ? " WHERE Z_ENT IN (" + entity.layout.entityNumbers.map(String.init).joined(separator: ", ") + ")" : ""
                    let indexName = Self.ddlName("Z_\(name)_UNIQUE_\(names.joined(separator: "_"))")
                    indexes.append("CREATE UNIQUE INDEX IF NOT EXISTS \(indexName) ON \(Self.ddlName(table)) (\(columns.joined(separator: ", ")))\(conditions)")
                }
            }
        }
        // Join tables: the owning side's column first, then the other, then order columns.
        var joins: [String: JoinTableSpec] = [:]
        for entity in entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties {
                guard let join = relationship.joinTable else { continue }
                var spec = joins[join.name] ?? JoinTableSpec(name: join.name, first: "", second: "", orderColumns: [])
                let sourceRoot = ObjectIdentifier(entity.rootEntity)
                let destinationRoot = relationship.destinationEntity.map { ObjectIdentifier($0.rootEntity) }
                if join.isOwner {
                    (spec.first, spec.second) = (join.sourceColumn, join.destinationColumn)
                    (spec.firstRoot, spec.secondRoot) = (sourceRoot, destinationRoot)
                    if let order = join.orderColumn { spec.orderColumns.insert(order, at: 0) }
                } else {
                    if spec.first.isEmpty {
                        (spec.first, spec.second) = (join.destinationColumn, join.sourceColumn)
                        (spec.firstRoot, spec.secondRoot) = (destinationRoot, sourceRoot)
                    }
                    if let order = join.orderColumn { spec.orderColumns.append(order) }
                }
                joins[join.name] = spec
            }
        }
        joinTables = joins.values.sorted { $0.name < $1.name }
        // Names for SQL: the model's derived ones, with the model's Z_ENT numbers.
        let highest = entities.map(\.layout.entityNumber).max() ?? 0
        storage = Array(repeating: nil, count: highest + 1)
        entitiesByNumber = Array(repeating: nil, count: highest + 1)
        for entity in entities {
            let layout = entity.layout
            let number = layout.entityNumber
            entitiesByNumber[number] = entity
            storage[number] = EntityStorage(
                number: number, table: Self.quoted(layout.tableName),
                columns: layout.properties.map { $0.isStoredInRow ? Self.quoted($0.columnName) : nil },
                entityColumns: layout.properties.map { ($0 as? NSRelationshipDescription)?.entityColumn.map(Self.quoted) },
                entity: entity)
            for case let relationship as NSRelationshipDescription in entity.ownProperties where relationship.isToMany && !relationship.isTransient {
                if let join = relationship.joinTable {
                    toMany[ObjectIdentifier(relationship)] = .join(
                        table: Self.quoted(join.name), source: Self.quoted(join.sourceColumn),
                        destination: Self.quoted(join.destinationColumn), order: join.orderColumn.map(Self.quoted))
                } else if let hidden = relationship.hiddenForeignKeyColumn {
                    toMany[ObjectIdentifier(relationship)] = .foreignKey(
                        column: Self.quoted(hidden), order: relationship.orderColumn.map(Self.quoted), hidden: true)
                } else if let inverse = relationship.inverseRelationship, !inverse.isToMany, !inverse.isTransient {
                    toMany[ObjectIdentifier(relationship)] = .foreignKey(
                        column: Self.quoted(inverse.columnName), order: relationship.orderColumn.map(Self.quoted), hidden: false)
                }
            }
        }
        hasExternalData = storage.contains { !($0?.externalIndexes.isEmpty ?? true) }
        makeEntityConditions()
    }

    /// The fixed first columns of every entity table.
    static let header = [Column(name: "Z_PK", type: "INTEGER PRIMARY KEY"), Column(name: "Z_ENT", type: "INTEGER"),
                         Column(name: "Z_OPT", type: "INTEGER")]

    private func index(table: String, name: String, columns: [String]) -> String {
        "CREATE INDEX IF NOT EXISTS \(Self.ddlName(name)) ON \(Self.ddlName(table)) (\(columns.map(Self.ddlName).joined(separator: ", ")))"
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

    /// The `CREATE TABLE` of an entity table.
    static func createStatement(_ table: Table) -> String {
        "CREATE TABLE \(ddlName(table.name)) ( " + table.columns.map { "\(ddlName($0.name)) \($0.type)" }.joined(separator: ", ") + " )"
    }

    /// The `CREATE TABLE` of a join table.
    static func createStatement(_ join: JoinTableSpec) -> String {
        let (first, second) = (ddlName(join.first), ddlName(join.second))
        let columns = ["\(first) INTEGER", "\(second) INTEGER"] + join.orderColumns.map { "\(ddlName($0)) INTEGER" }
        return "CREATE TABLE \(ddlName(join.name)) ( " + columns.joined(separator: ", ") + ", PRIMARY KEY (\(first), \(second)) )"
    }

    /// The index of a join table on its second column, then its first.
    static func indexStatement(_ join: JoinTableSpec) -> String {
        "CREATE INDEX IF NOT EXISTS \(ddlName("\(join.name)_\(join.second)_INDEX")) ON \(ddlName(join.name)) (\(ddlName(join.second)), \(ddlName(join.first)))"
    }

    /// The statements that create the whole schema of a new file.
    var createStatements: [String] {
        var sql = tables.map(Self.createStatement)
        for join in joinTables { sql += [Self.createStatement(join), Self.indexStatement(join)] }
        sql.append(contentsOf: indexes)
        sql.append("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        sql.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        sql.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        return sql
    }
}
