import Foundation

// An existing file's own names: the model mapped onto the tables and columns the file really
// has (`sqlite_master`, `PRAGMA table_info`, `Z_PRIMARYKEY`). Apple's names carry history that
// the model alone cannot tell:
// - `Z_ENT` numbers are the file's `Z_PRIMARYKEY` rows, matched by entity name.
// - Columns of a hierarchy's table are numbered on collision (`ZTITLE`, `ZTITLE1`, …), in an
//   order that changed between Apple's releases. A colliding column whose rows hold values
//   belongs to the property of the entity whose rows use it (one `GROUP BY Z_ENT` over the
//   table); the others go in the file's `Z_ENT` order to the first column of their declared
//   type (an empty column is read as nothing either way; this decides where a value is written).
// - Join tables can carry a `1` (or `2`, …) after a column name, and a self-referential
//   many-to-many table is named after whichever side Apple picked when it made the table.
// - Columns that lightweight migration appended come in `ALTER TABLE` order: columns are
//   matched by name, never by position.
// Every name the model needs must be found: a file that lacks one is refused (134020, naming
// it) before anything is read or written. Opened with `NSIgnorePersistentStoreVersioningOption`
// (`lenient`), a file of another model version may lack some: those properties are left
// without a column (`EntityStorage/unmappedIndexes`); a fetch or save that needs one throws.
extension SQLiteSchema {
    /// The layout of the existing file `db` for `model`. A store added for a `configuration`
    /// needs the tables and names of that configuration's entities only (Apple's store of a
    /// configuration has no others); the other entities' are mapped where the file has them.
    convenience init(model: NSManagedObjectModel, reading db: SQLiteConnection, lenient: Bool = false, configuration: String? = nil) throws {
        self.init(model: model)
        var mapper = try FileMapper(model: model, entities: entities, db: db, lenient: lenient,
                                    outside: Self.entitiesOutside(configuration, of: model))
        try mapper.mapEntityColumns()
        try mapper.mapRelationshipColumns()
        storage = mapper.storage
        hasExternalData = storage.contains { !($0?.externalIndexes.isEmpty ?? true) }
        makeEntityConditions()
        toMany = mapper.toMany
        entitiesByNumber = mapper.entitiesByNumber
        tables = mapper.tables
        joinTables = mapper.joinTables
        indexes = []
    }

    /// The entities whose hierarchy has no member in `configuration` (none for the default one).
    static func entitiesOutside(_ configuration: String?, of model: NSManagedObjectModel) -> Set<ObjectIdentifier> {
        guard !NSManagedObjectModel.namesAllEntities(configuration),
              let inside = model.entities(forConfigurationName: configuration) else { return [] }
        let insideRoots = Set(inside.map { ObjectIdentifier($0.rootEntity) })
        return Set(model.entities.filter { !insideRoots.contains(ObjectIdentifier($0.rootEntity)) }.map(ObjectIdentifier.init))
    }
}

/// The tables and columns of an existing file, and the model's names mapped onto them.
private struct FileMapper {
    struct FileTable {
        var name: String
        /// Columns in the file's order, with their declared types.
        var columns: [(name: String, type: String)]
        /// Upper-cased names of the columns already given a meaning.
        var claimed: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]

        func has(_ upper: String) -> Bool { columns.contains { $0.name.uppercased() == upper } }
        func name(of upper: String) -> String? { columns.first { $0.name.uppercased() == upper }?.name }
        /// The unclaimed columns named `base`, or `base` and digits (`ZTITLE`, `ZTITLE1`), lowest number first.
        func candidates(_ base: String) -> [String] {
            columns.map(\.name).filter { column in
                let upper = column.uppercased()
                guard !claimed.contains(upper), upper.hasPrefix(base) else { return false }
                return upper.dropFirst(base.count).allSatisfy(\.isASCIIDigit)
            }.sorted { ($0.count, $0.uppercased()) < ($1.count, $1.uppercased()) }
        }
        func type(of column: String) -> String {
            columns.first { $0.name == column }?.type ?? ""
        }
    }

    let model: NSManagedObjectModel
    let entities: [NSEntityDescription]
    let db: SQLiteConnection
    /// Whether a name the file lacks leaves its property unmapped instead of refusing the file.
    let lenient: Bool
    /// Entities outside the store's configuration: names the file lacks leave theirs unmapped.
    let outside: Set<ObjectIdentifier>

    /// Whether a name of `entity` the file lacks leaves it unmapped (``lenient``, or outside).
    func isLenient(_ entity: NSEntityDescription?) -> Bool {
        lenient || entity.map { outside.contains(ObjectIdentifier($0)) } ?? false
    }
    /// The file's tables by upper-cased name.
    var fileTables: [String: FileTable] = [:]
    /// Each entity's `Z_ENT` in the file, by the model's entity number.
    var numbers: [Int] = []
    var storage: [SQLiteSchema.EntityStorage?] = []
    var toMany: [ObjectIdentifier: SQLiteSchema.ToManyStorage] = [:]
    var entitiesByNumber: [NSEntityDescription?] = []
    var tables: [SQLiteSchema.Table] = []
    var joinTables: [SQLiteSchema.JoinTableSpec] = []
    /// Each root's table, by the root's model entity number (upper-cased key of ``fileTables``).
    var tableKeys: [Int: String] = [:]

    init(model: NSManagedObjectModel, entities: [NSEntityDescription], db: SQLiteConnection, lenient: Bool, outside: Set<ObjectIdentifier>) throws {
        self.model = model
        self.entities = entities
        self.db = db
        self.lenient = lenient
        self.outside = outside
        let list = try db.cached("SELECT name FROM sqlite_master WHERE type = 'table'")
        var names: [String] = []
        while try list.step() { names.append(list.string(0)) }
        list.reset()
        for name in names {
            let info = try db.prepare("PRAGMA table_info(\(SQLiteSchema.quoted(name)))")
            defer { info.finalize() }
            var columns: [(name: String, type: String)] = []
            while try info.step() { columns.append((info.string(1), info.string(2).uppercased())) }
            fileTables[name.uppercased()] = FileTable(name: name, columns: columns)
        }
        // Z_ENT numbers by entity name.
        var byName: [String: Int] = [:]
        if fileTables["Z_PRIMARYKEY"] != nil {
            // Not Apple's ancillary entities (persistent history's CHANGE, TRANSACTION, … from 16001).
            let rows = try db.prepare("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < \(SQLiteHistory.entityOffset)")
            defer { rows.finalize() }
            while try rows.step() {
                if !rows.isNull(0) && !rows.isNull(1) { byName[rows.string(1)] = Int(rows.int64(0)) }
            }
        }
        let highest = entities.map(\.layout.entityNumber).max() ?? 0
        numbers = Array(repeating: 0, count: highest + 1)
        storage = Array(repeating: nil, count: highest + 1)
        var seen: [Int: String] = [:]
        var unnumbered = (byName.values.max() ?? 0) + 1
        for entity in entities {
            let name = entity.name ?? ""
            guard let number = byName[name].flatMap({ $0 > 0 ? $0 : nil }) ?? (isLenient(entity) ? unnumbered : nil) else {
                throw Self.missing("no Z_PRIMARYKEY row for the entity \(name)", db)
            }
            if number == unnumbered { unnumbered += 1 }
            if let other = seen[number] {
                throw Self.missing("the entities \(other) and \(name) share the Z_ENT number \(number) in Z_PRIMARYKEY", db)
            }
            seen[number] = name
            numbers[entity.layout.entityNumber] = number
        }
        entitiesByNumber = Array(repeating: nil, count: (seen.keys.max() ?? 0) + 1)
        for entity in entities { entitiesByNumber[number(entity)] = entity }
    }

    func number(_ entity: NSEntityDescription) -> Int { numbers[entity.layout.entityNumber] }

    static func missing(_ what: String, _ db: SQLiteConnection) -> NSError {
        CoreDataError.make(.incompatibleSchema,
            "The store at \(db.path) does not have the layout its metadata promises for the model: \(what). It was left untouched.",
            extra: [NSFilePathErrorKey: db.path])
    }

    /// The key of `root`'s table in ``fileTables``.
    func tableKey(_ root: NSEntityDescription) -> String { tableKeys[root.layout.entityNumber]! }

    // MARK: Attributes and to-one relationships

    mutating func mapEntityColumns() throws {
        let roots = entities.filter { $0.superentity == nil }
        for root in roots {
            let key = root.layout.tableName.uppercased()
            if fileTables[key] == nil {
                guard isLenient(root) else { throw Self.missing("no table \(root.layout.tableName) for the entity \(root.name ?? "")", db) }
                fileTables[key] = FileTable(name: root.layout.tableName, columns: [])
            }
            tableKeys[root.layout.entityNumber] = key
        }
        var columns: [ObjectIdentifier: String] = [:]
        for root in roots {
            let key = tableKey(root)
            // The family in the file's Z_ENT order, each entity's own stored properties in the
            // model's order: the order in which Apple's store numbers colliding columns.
            let family = entities.filter { $0.rootEntity === root }.sorted { number($0) < number($1) }
            var groups: [(base: String, members: [NSPropertyDescription])] = []
            for entity in family {
                for property in entity.ownLayoutProperties where property.isStoredInRow {
                    let base = "Z" + property.columnStem
                    if let at = groups.firstIndex(where: { $0.base == base }) {
                        groups[at].members.append(property)
                    } else {
                        groups.append((base, [property]))
                    }
                }
            }
            // Lone names first, by their exact column: a column such as ZTITLE1 of a property
            // named title1 is then not taken for a numbered title.
            for group in groups where group.members.count == 1 && fileTables[key]!.has(group.base) {
                let name = fileTables[key]!.name(of: group.base)!
                fileTables[key]!.claimed.insert(group.base)
                columns[ObjectIdentifier(group.members[0])] = name
            }
            for group in groups where columns[ObjectIdentifier(group.members[0])] == nil {
                for (property, column) in try assign(group.members, base: group.base, table: key) {
                    columns[ObjectIdentifier(property)] = column
                }
            }
        }
        // Entity columns of to-one relationships into a hierarchy: `Z<n>_` and the key's name.
        var entityColumns: [ObjectIdentifier: String] = [:]
        for entity in entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties
            where relationship.isStoredInRow && relationship.entityColumn != nil {
                let key = tableKey(entity.rootEntity)
                guard let foreignKey = columns[ObjectIdentifier(relationship)]?.uppercased() else { continue }
                let suffix = "_" + foreignKey.dropFirst()
                let expected = "Z\(number(relationship.destinationEntity!))" + suffix
                let table = fileTables[key]!
                let found = table.has(expected) && !table.claimed.contains(expected) ? table.name(of: expected) : table.columns.map(\.name).first {
                    let upper = $0.uppercased()
                    guard !table.claimed.contains(upper), upper.hasPrefix("Z"), upper.hasSuffix(suffix) else { return false }
                    let digits = upper.dropFirst().dropLast(suffix.count)
                    return !digits.isEmpty && digits.allSatisfy(\.isASCIIDigit)
                }
                guard let found else {
                    if isLenient(entity) { continue }
                    throw Self.missing("no column \(expected) (the entity of \(entity.name ?? "").\(relationship.name)) in \(table.name)", db)
                }
                fileTables[key]!.claimed.insert(found.uppercased())
                entityColumns[ObjectIdentifier(relationship)] = found
            }
        }
        for entity in entities {
            let layout = entity.layout
            storage[layout.entityNumber] = SQLiteSchema.EntityStorage(
                number: number(entity), table: SQLiteSchema.quoted(fileTables[tableKey(entity.rootEntity)]!.name),
                columns: layout.properties.map { property in
                    property.isStoredInRow ? columns[ObjectIdentifier(property)].map(SQLiteSchema.quoted) : nil
                },
                entityColumns: layout.properties.map { entityColumns[ObjectIdentifier($0)].map(SQLiteSchema.quoted) },
                entity: entity)
        }
        // The columns the store reads, in the file's order.
        for root in roots {
            let table = fileTables[tableKey(root)]!
            var read = SQLiteSchema.header
            for column in table.columns where !["Z_PK", "Z_ENT", "Z_OPT"].contains(column.name.uppercased()) {
                if table.claimed.contains(column.name.uppercased()) { read.append(.init(name: column.name, type: column.type)) }
            }
            tables.append(SQLiteSchema.Table(name: table.name, root: root, columns: read))
        }
    }

    /// The columns of properties sharing the column name `base` in one table.
    private mutating func assign(_ members: [NSPropertyDescription], base: String, table key: String) throws -> [(NSPropertyDescription, String)] {
        var candidates = fileTables[key]!.candidates(base)
        var result: [(NSPropertyDescription, String)] = []
        var open = members
        func take(_ property: NSPropertyDescription, _ column: String) {
            result.append((property, column))
            open.removeAll { $0 === property }
            candidates.removeAll { $0 == column }
            fileTables[key]!.claimed.insert(column.uppercased())
        }
        // A column whose rows hold values belongs to the property of the entity they are rows of.
        if members.count > 1 && candidates.count > 1 {
            let use = try columnUse(candidates, table: fileTables[key]!.name)
            for column in candidates {
                guard let users = use[column], !users.isEmpty else { continue }
                let owners = open.filter { property in
                    let own = Set(property.entity!.layout.descendants.map { number($0) })
                    return users.isSubset(of: own)
                }
                if owners.count == 1 { take(owners[0], column) }
            }
        }
        // Then in the order Apple's store numbers them (the file's Z_ENT order, lowest number
        // first), each taking the first column of its declared type.
        for property in open {
            let wanted = Self.affinity(Self.sqlType(of: property))
            let column = candidates.first { Self.affinity(fileTables[key]!.type(of: $0)) == wanted } ?? candidates.first
            guard let column else {
                if isLenient(property.entity) { continue }
                throw Self.missing("no column \(property.columnName) for \(property.entity?.name ?? "").\(property.name) in \(fileTables[key]!.name)", db)
            }
            take(property, column)
        }
        return result
    }

    /// For each column, the `Z_ENT` numbers of the rows in which it holds a value.
    private func columnUse(_ columns: [String], table: String) throws -> [String: Set<Int>] {
        let counts = columns.map { "count(\(SQLiteSchema.quoted($0)))" }.joined(separator: ", ")
        let statement = try db.prepare("SELECT Z_ENT, \(counts) FROM \(SQLiteSchema.quoted(table)) GROUP BY Z_ENT")
        defer { statement.finalize() }
        var use: [String: Set<Int>] = [:]
        while try statement.step() {
            let entity = Int(statement.int64(0))
            for (offset, column) in columns.enumerated() where statement.int64(Int32(offset + 1)) > 0 {
                use[column, default: []].insert(entity)
            }
        }
        return use
    }

    static func sqlType(of property: NSPropertyDescription) -> String {
        (property as? NSAttributeDescription).map { SQLiteSchema.sqlType($0.attributeType) } ?? "INTEGER"
    }

    /// A coarse class of a declared SQL type, for telling columns apart.
    static func affinity(_ type: String) -> Int {
        let type = type.uppercased()
        if type.contains("INT") { return 0 }
        if type.contains("CHAR") || type.contains("TEXT") || type.contains("CLOB") { return 3 }
        if type.contains("DECIMAL") { return 2 }
        if type.contains("FLOAT") || type.contains("REAL") || type.contains("DOUB") || type.contains("TIMESTAMP") { return 1 }
        return 4
    }

    // MARK: To-many relationships

    mutating func mapRelationshipColumns() throws {
        var joins: [String: SQLiteSchema.JoinTableSpec] = [:]
        for entity in entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties where relationship.isToMany && !relationship.isTransient {
                guard let destination = relationship.destinationEntity else { continue }
                let id = ObjectIdentifier(relationship)
                let destinationKey = tableKey(destination.rootEntity)
                if relationship.joinTable != nil, let inverse = relationship.inverseRelationship {
                    guard let spec = try joinTable(relationship, inverse: inverse) else { continue }
                    joins[spec.table.uppercased()] = spec.tableSpec
                    toMany[id] = .join(table: SQLiteSchema.quoted(spec.table), source: SQLiteSchema.quoted(spec.source),
                                       destination: SQLiteSchema.quoted(spec.destination), order: spec.order.map(SQLiteSchema.quoted))
                } else if relationship.hiddenForeignKeyColumn != nil {
                    let base = "Z\(number(entity))" + relationship.name.uppercased()
                    guard let column = try claim(base, in: destinationKey, for: relationship) else { continue }
                    let order = relationship.isOrdered ? try claim("Z_FOK_\(number(entity))" + relationship.name.uppercased(), in: destinationKey, for: relationship) : nil
                    if relationship.isOrdered && order == nil { continue }
                    toMany[id] = .foreignKey(column: SQLiteSchema.quoted(column), order: order.map(SQLiteSchema.quoted), hidden: true)
                } else if let inverse = relationship.inverseRelationship, !inverse.isToMany, !inverse.isTransient {
                    // The order column named after the foreign key's (`Z_FOK_PARENT1` beside
                    // `ZPARENT1`), else the first free `Z_FOK_<INVERSE>…`.
                    var order: String?
                    if relationship.isOrdered {
                        let foreignKey = storage[inverse.entity!.layout.entityNumber]!.columns[inverse.index]
                        let paired = foreignKey.map { "Z_FOK_" + $0.replacingOccurrences(of: "\"", with: "").uppercased().dropFirst() }
                        if let paired, fileTables[destinationKey]!.has(paired), !fileTables[destinationKey]!.claimed.contains(paired) {
                            order = fileTables[destinationKey]!.name(of: paired)
                            fileTables[destinationKey]!.claimed.insert(paired)
                        } else {
                            order = try claim("Z_FOK_" + inverse.name.uppercased(), in: destinationKey, for: relationship)
                        }
                    }
                    guard let column = storage[inverse.entity!.layout.entityNumber]!.columns[inverse.index],
                          !relationship.isOrdered || order != nil else { continue }
                    toMany[id] = .foreignKey(column: column, order: order.map(SQLiteSchema.quoted), hidden: false)
                }
            }
        }
        joinTables = joins.values.sorted { $0.name < $1.name }
        // Columns claimed since the tables were listed (order and hidden keys) are read too.
        for (offset, table) in tables.enumerated() {
            let file = fileTables[table.name.uppercased()]!
            let known = Set(table.columns.map { $0.name.uppercased() })
            for column in file.columns where file.claimed.contains(column.name.uppercased()) && !known.contains(column.name.uppercased()) {
                tables[offset].columns.append(.init(name: column.name, type: column.type))
            }
        }
    }

    /// The unclaimed column `base` (or `base` and digits) of a table, claimed (`nil` if lenient and missing).
    private mutating func claim(_ base: String, in key: String, for relationship: NSRelationshipDescription) throws -> String? {
        guard let column = fileTables[key]!.candidates(base).first else {
            if isLenient(relationship.entity) { return nil }
            throw Self.missing("no column \(base) for \(relationship.entity?.name ?? "").\(relationship.name) in \(fileTables[key]!.name)", db)
        }
        fileTables[key]!.claimed.insert(column.uppercased())
        return column
    }

    /// A many-to-many relationship's join table seen from `relationship`'s side.
    private mutating func joinTable(_ relationship: NSRelationshipDescription, inverse: NSRelationshipDescription) throws
        -> (table: String, source: String, destination: String, order: String?, tableSpec: SQLiteSchema.JoinTableSpec)? {
        do {
            return try findJoinTable(relationship, inverse: inverse)
        } catch where isLenient(relationship.entity) {
            return nil
        }
    }

    private func findJoinTable(_ relationship: NSRelationshipDescription, inverse: NSRelationshipDescription) throws
        -> (table: String, source: String, destination: String, order: String?, tableSpec: SQLiteSchema.JoinTableSpec) {
        let source = relationship.entity!, other = inverse.entity!
        let destination = relationship.destinationEntity!
        // Named after either side: Z_<n><NAME> of this side or of the inverse's.
        let candidates = ["Z_\(number(source))" + relationship.name.uppercased(), "Z_\(number(other))" + inverse.name.uppercased()]
        let preferred = relationship.joinTable!.isOwner ? candidates : candidates.reversed()
        let names = fileTables.keys.sorted()
        let numbered = preferred.compactMap { base in names.first { $0.hasPrefix(base) && $0.dropFirst(base.count).allSatisfy(\.isASCIIDigit) } }
        guard let key = preferred.first(where: { fileTables[$0] != nil }) ?? numbered.first else {
            throw Self.missing("no join table \(preferred[0]) for \(source.name ?? "").\(relationship.name)", db)
        }
        let table = fileTables[key]!
        let keys = table.columns.map(\.name).filter { !$0.uppercased().hasPrefix("Z_FOK_") }
        // This side's keys are in the column named after the inverse, the members' after this
        // relationship, each perhaps followed by a number, and led by the number of the
        // relationship's destination or of the entity declaring the other (they differ when an
        // inverse is declared on a parent or child of the destination).
        let sourceBase = Set(["Z_\(number(inverse.destinationEntity!))", "Z_\(number(source))"].map { $0 + inverse.name.uppercased() })
        let destinationBase = Set(["Z_\(number(destination))", "Z_\(number(other))"].map { $0 + relationship.name.uppercased() })
        func matches(_ column: String, _ bases: Set<String>) -> Bool {
            let upper = column.uppercased()
            return bases.contains { upper.hasPrefix($0) && upper.dropFirst($0.count).allSatisfy(\.isASCIIDigit) }
        }
        guard keys.count == 2 else {
            throw Self.missing("the join table \(table.name) has \(keys.count) key columns, not 2", db)
        }
        let (a, b) = (keys[0], keys[1])
        let sourceColumn: String, destinationColumn: String
        if matches(a, sourceBase) && matches(b, destinationBase) && !(matches(a, destinationBase) && matches(b, sourceBase)) {
            (sourceColumn, destinationColumn) = (a, b)
        } else if matches(b, sourceBase) && matches(a, destinationBase) && !(matches(b, destinationBase) && matches(a, sourceBase)) {
            (sourceColumn, destinationColumn) = (b, a)
        } else if matches(a, sourceBase) && matches(b, sourceBase) && sourceBase == destinationBase {
            // A relationship that is its own inverse: its own column first, the other after it.
            let sorted = [a, b].sorted { ($0.count, $0.uppercased()) < ($1.count, $1.uppercased()) }
            (sourceColumn, destinationColumn) = (sorted[0], sorted[1])
        } else {
            throw Self.missing("the join table \(table.name) has no columns \(sourceBase.sorted().joined(separator: " or ")) and \(destinationBase.sorted().joined(separator: " or ")) (it has \(keys.joined(separator: ", ")))", db)
        }
        var order: String?
        if relationship.isOrdered {
            let base = "Z_FOK_" + destinationColumn.uppercased().dropFirst(2)
            order = table.columns.map(\.name).first { $0.uppercased() == base }
            guard order != nil else { throw Self.missing("no column \(base) for the order of \(source.name ?? "").\(relationship.name) in \(table.name)", db) }
        }
        // The table's first key column is the owning side's (the PRIMARY KEY's order).
        let sourceFirst = keys[0] == sourceColumn
        let sourceRoot = ObjectIdentifier(source.rootEntity), destinationRoot = ObjectIdentifier(destination.rootEntity)
        let spec = SQLiteSchema.JoinTableSpec(
            name: table.name, first: sourceFirst ? sourceColumn : destinationColumn, second: sourceFirst ? destinationColumn : sourceColumn,
            orderColumns: table.columns.map(\.name).filter { $0.uppercased().hasPrefix("Z_FOK_") },
            firstRoot: sourceFirst ? sourceRoot : destinationRoot, secondRoot: sourceFirst ? destinationRoot : sourceRoot)
        return (table.name, sourceColumn, destinationColumn, order, spec)
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
