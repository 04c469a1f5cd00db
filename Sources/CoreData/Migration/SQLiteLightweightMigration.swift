import CSQLite
import Foundation

// Lightweight migration of a SQLite store, in place, in SQL, in one transaction: the file becomes
// the layout a new store of the destination model has (`SQLiteSchema(model:)`: its tables, join
// tables, indexes and `Z_ENT` numbers), with every row, `Z_PK` and `Z_OPT` kept.
//
// - A table whose rows stay where they are, with the same `Z_ENT` numbers, changes with
//   `ALTER TABLE`: `ADD COLUMN` for an added attribute or to-one, `DROP COLUMN` for a removed
//   one, an `UPDATE` where a non-optional attribute's default fills a new column or a `NULL`.
// - Any other table (a renamed column, entities renumbered or moved between tables, a renamed
//   entity, a relationship's keys moved) is rebuilt: the old table is renamed aside, the new one
//   made with the new store's DDL, the rows copied entity by entity (`INSERT … SELECT`, `Z_ENT`
//   rewritten), the old one dropped. Join tables likewise. The copies run before the ALTERs, so
//   that a copy can read a column an ALTER drops.
// - Then the indexes are the new store's, `Z_PRIMARYKEY` is rewritten (new numbers, `Z_MAX`
//   kept), and the metadata carries the destination model's version hashes.
// A non-optional property left without a value (no default, rows present) throws
// `NSMigrationError` (134110) naming it before anything is written; any failure rolls back.
//
// The plan is the same for a PostgreSQL store's database (`PostgreSQLStore+Migration.swift`):
// what differs between the two (the catalog, column types, DDL, indexes, metadata) is asked of
// the ``LightweightMigrationDatabase``; the statements here quote every name and use `?`.

/// One in-place migration of an open SQLite file (or a PostgreSQL store's database) from its
/// source model to a destination model.
internal struct SQLiteLightweightMigration {
    /// How a destination column of an entity's rows gets its value from the entity's source row.
    enum Feed {
        /// No value (`NULL`).
        case null
        /// The source column of that name, as it is.
        case copy(String)
        /// The source column of that name (or none), with `default` where it is `NULL`.
        case fill(String?, StoreValue)
        /// The source column of that name converted to another attribute type by `sql` (an
        /// expression on the source row, `s`), with `fill` where it is `NULL`.
        case converted(String, sql: String, fill: StoreValue?)
        /// Any other SQL expression on the source row (`s`).
        case computed(String)
        /// The lowest key of the rows of another old table (quoted) whose column `match` holds the
        /// source row's key: a to-many kept in its destination's rows made to-one.
        case lowestKey(table: String, match: String)
    }

    /// The database rewritten: the SQLite file, or a PostgreSQL store's database.
    let db: any LightweightMigrationDatabase
    let destination: NSManagedObjectModel
    /// The file as it is, read with the source model.
    let from: SQLiteSchema
    /// The layout of a new store of the destination model.
    let to: SQLiteSchema
    private var sourceOf: [ObjectIdentifier: NSEntityDescription] = [:]
    private var destinationOf: [ObjectIdentifier: NSEntityDescription] = [:]
    private var entityMappings: [ObjectIdentifier: NSEntityMapping] = [:]

    /// The migration of the open SQLite file `db`, its layout read from the file.
    init(db: SQLiteConnection, source: NSManagedObjectModel, destination: NSManagedObjectModel, mapping: NSMappingModel) throws {
        ExternalDataMigration.registerFunctions(on: db.handle)
        self.init(database: SQLiteMigrationDatabase(db: db), layout: try SQLiteSchema(model: source, reading: db),
                  source: source, destination: destination, mapping: mapping)
    }

    /// The migration of `database`, whose layout is `layout` (of the model `source`).
    init(database: any LightweightMigrationDatabase, layout: SQLiteSchema, source: NSManagedObjectModel,
         destination: NSManagedObjectModel, mapping: NSMappingModel) {
        db = database
        self.destination = destination
        from = layout
        to = SQLiteSchema(model: destination)
        let sources = source.entitiesByName, destinations = destination.entitiesByName
        for entityMapping in mapping.entityMappings ?? [] {
            let d = entityMapping.destinationEntityName.flatMap { destinations[$0] }
            let s = entityMapping.sourceEntityName.flatMap { sources[$0] }
            if let d { entityMappings[ObjectIdentifier(d)] = entityMapping }
            if let d, let s {
                sourceOf[ObjectIdentifier(d)] = s
                destinationOf[ObjectIdentifier(s)] = d
            }
        }
    }

    // MARK: Running it

    /// Migrates the store at `url` from `source` to `destination`, in one transaction, if its
    /// metadata says another model wrote it: infers the mapping (134190 if it can't), rewrites the
    /// file. When the file turns out to be of another model than `source` (another process
    /// migrated it meanwhile), its source model is searched again (``ModelSearch``; 134130 if none
    /// is found). A failure leaves the file as it was.
    ///
    /// Reports progress as Foundation APIs without a progress parameter do: a child of the
    /// caller's current `Progress` (`becomeCurrent(withPendingUnitCount:)`), if there is one,
    /// completes one unit per step of ``run(metadata:progress:)``; it can't be cancelled.
    static func migrateStore(at url: URL, from source: NSManagedObjectModel, to destination: NSManagedObjectModel) throws {
        let progress = Progress(totalUnitCount: 1)
        progress.isCancellable = false
        let db = try SQLiteConnection(path: SQLiteStore.databaseName(for: url), readOnly: false, create: false)
        try db.execute("PRAGMA foreign_keys = OFF")
        try db.transaction {
            let metadata = try SQLiteStore.readMetadata(db)
            // Another coordinator or process may have migrated it meanwhile.
            if destination.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
                progress.completedUnitCount = progress.totalUnitCount
                return
            }
            var source = source
            if !source.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata) {
                guard let found = ModelSearch.sourceModel(forStoreMetadata: metadata, destination: destination) else {
                    throw missingSourceModel(url.path, metadata)
                }
                source = found
            }
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
            do {
                try SQLiteLightweightMigration(db: db, source: source, destination: destination, mapping: mapping)
                    .run(metadata: metadata, progress: progress)
            } catch {
                throw constraintViolation(error) ?? error
            }
        }
    }

    /// `NSMigrationMissingSourceModelError` (134130): no model the app ships wrote the store at
    /// `location` (a file's path, or a PostgreSQL store's URL without its password).
    static func missingSourceModel(_ location: String, _ metadata: [String: Any]) -> NSError {
        CoreDataError.make(.migrationMissingSourceModel,
            "Can't find the model that wrote the store at \(location) (its version hashes match none of the models found), so it can't be migrated; it was left untouched",
            extra: [NSFilePathErrorKey: location, "metadata": metadata, "reason": "Can't find model for source store"])
    }

    /// `NSMigrationMissingMappingModelError` (134140) for the store at `location`: no mapping
    /// model of the app's maps `source` to `destination`, and inference is off (`inference`
    /// `nil`) or failed (as Apple's coordinator reports it: the inference's own error, with its
    /// entity, property and reason, underneath).
    static func missingMappingModel(_ location: String, source: NSManagedObjectModel, destination: NSManagedObjectModel,
                                    inference: NSError?) -> NSError {
        var extra: [String: Any] = [NSFilePathErrorKey: location, "sourceModel": source, "destinationModel": destination]
        guard let inference else {
            extra["reason"] = "Can't find mapping model for migration"
            return CoreDataError.make(.migrationMissingMappingModel,
                "Can't find mapping model for migration of the store at \(location): no mapping model of the app's maps its model to the current one, and NSInferMappingModelAutomaticallyOption is not set",
                extra: extra)
        }
        extra["reason"] = "Can't find or automatically infer mapping model for migration"
        extra[NSUnderlyingErrorKey] = inference
        return CoreDataError.make(.migrationMissingMappingModel,
            "Can't find or automatically infer a mapping model to migrate the store at \(location): \(inference.localizedDescription)",
            extra: extra)
    }

    /// `NSMigrationConstraintViolationError` (134111) for a SQLite constraint failure: the rows
    /// break a uniqueness constraint of the destination model.
    static func constraintViolation(_ error: any Error) -> NSError? {
        guard let error = error.asNSError, error.domain == NSCocoaErrorDomain, error.code == NSSQLiteError,
              let code = error.userInfo[NSSQLiteErrorDomain] as? Int, code & 0xff == Int(SQLITE_CONSTRAINT) else { return nil }
        return CoreDataError.make(.migrationConstraintViolation,
            "Can't migrate the store: its rows break a uniqueness constraint of the destination model (\(error.localizedDescription)); the store was left untouched",
            extra: [NSUnderlyingErrorKey: error])
    }

    /// Rewrites the file, inside the caller's transaction. `progress` gets one unit per step:
    /// each table or join table altered or rebuilt, the indexes, the keys and metadata.
    func run(metadata: [String: Any], progress: Progress? = nil) throws {
        var feeds: [ObjectIdentifier: [(column: String, feed: Feed)]] = [:]
        for entity in to.entities { feeds[ObjectIdentifier(entity)] = try self.feeds(entity) }
        try checkMandatoryValues(feeds)

        var kept = Set<String>() // upper-cased names of tables migrated in place
        var alterations: [(create: [String], copy: [(String, [StoreValue])])] = []
        var rebuilt: [SQLiteSchema.Table] = []
        for table in to.tables {
            if let plan = try alterPlan(table, family: family(of: table), feeds: feeds) {
                kept.insert(table.name.uppercased())
                alterations.append(([], plan))
            } else {
                rebuilt.append(table)
            }
        }
        // The copies come first, the ALTERs last: a copy may read a column that an ALTER drops.
        var steps: [(create: [String], copy: [(String, [StoreValue])])] = []
        for join in to.joinTables where try !joinTableIsKept(join) {
            steps.append(([db.createStatement(join)], try joinCopy(join, kept: kept)))
        }
        for join in to.joinTables where try joinTableIsKept(join) { kept.insert(join.name.uppercased()) }
        for table in rebuilt {
            steps.append(([db.createStatement(table, in: to)], copyPlan(table, family: family(of: table), feeds: feeds, kept: kept)))
        }
        steps += alterations
        // The model's old tables (other tables of the file, such as Apple's history, are left alone).
        let managed = Set(from.tables.map { $0.name.uppercased() } + from.joinTables.map { $0.name.uppercased() })
        // Their indexes that the new layout lacks, or that belong to tables about to be replaced, go first.
        try db.dropIndexes(ofTables: managed, kept: kept, destination: to)
        // Old tables are set aside under temporary names, read by the copies, then dropped.
        let old = managed.subtracting(kept)
        for name in try db.tableNames() where old.contains(name.uppercased()) {
            try db.setAside(name, as: Self.aside(name))
        }
        progress?.totalUnitCount = Int64(steps.count + 2)
        for step in steps {
            for statement in step.create { try db.execute(statement, []) }
            for (sql, bindings) in step.copy { try db.execute(sql, bindings) }
            progress?.completedUnitCount += 1
        }
        for name in try db.tableNames() where name.hasPrefix(Self.asidePrefix) {
            try db.execute("DROP TABLE \(SQLiteSchema.quoted(name))", [])
        }
        try db.createIndexes(of: to)
        progress?.completedUnitCount += 1
        try renumberHistory()
        try rewritePrimaryKeys()
        try db.writeMetadata(metadata, of: destination)
        progress?.completedUnitCount += 1
    }

    // MARK: What each column gets

    /// The destination entities whose rows `table` holds.
    private func family(of table: SQLiteSchema.Table) -> [NSEntityDescription] {
        to.entities.filter { $0.rootEntity === table.root }
    }

    /// How a copy reads the old `table` (quoted): under its own name if it was migrated in place
    /// (`kept`, upper-cased names), else under its name set aside.
    private static func read(_ table: String, kept: Set<String>) -> String {
        let name = unquote(table)
        return SQLiteSchema.quoted(kept.contains(name.uppercased()) ? name : aside(name))
    }

    /// The name of the source property that `entity`'s property `name` comes from.
    /// A composite's element comes from the element it matches (by renaming identifier, then by
    /// name, at each depth) in the source composite its composite comes from.
    private func sourceProperty(_ name: String, of entity: NSEntityDescription) -> NSPropertyDescription? {
        guard let source = sourceOf[ObjectIdentifier(entity)], let mapping = entityMappings[ObjectIdentifier(entity)] else { return nil }
        let mappings = (mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? [])
        if let index = entity.layout.nameTable.index(of: name), let leaf = entity.layout.properties[index] as? CompositeLeafAttribute {
            guard let composite = leaf.composite,
                  let sourceComposite = mappings.first(where: { $0.name == composite.name })?.sourcePropertyName
                      .flatMap({ source.propertiesByName[$0] as? NSCompositeAttributeDescription }) else { return nil }
            return InferredMapping.sourceLeaf(at: leaf.elementPath.dropFirst(), of: composite, from: sourceComposite)
        }
        return mappings.first { $0.name == name }?.sourcePropertyName.flatMap { source.propertiesByName[$0] }
    }

    private static func unquote(_ quoted: String) -> String {
        String(quoted.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
    }

    /// The error of a change the in-place migration does not make (yet).
    private static func unsupported(_ entity: NSEntityDescription, _ property: NSPropertyDescription, _ what: String) -> NSError {
        CoreDataError.make(.migration,
            "Can't migrate \(entity.name ?? "").\(property.name) in place: \(what); the store was left untouched",
            extra: ["entity": entity.name ?? "", "property": property.name])
    }

    /// Every column of `entity`'s rows in the destination table, with what it gets (nothing for
    /// an added entity, which has no rows).
    func feeds(_ entity: NSEntityDescription) throws -> [(column: String, feed: Feed)] {
        guard sourceOf[ObjectIdentifier(entity)] != nil else { return [] }
        var result: [(column: String, feed: Feed)] = []
        for property in entity.layout.properties where property.isStoredInRow {
            let old = sourceProperty(property.name, of: entity)
            let oldColumn = old.flatMap { $0.isStoredInRow ? from.column(of: $0) : nil }.map(Self.unquote)
            if let attribute = property as? NSAttributeDescription {
                // The default value fills an added attribute, and the NULLs of one made non-optional.
                var fill = attribute.defaultValue.flatMap { StoreValue.storage(of: $0, for: attribute.attributeType) }
                if case .null? = fill { fill = nil }
                if let old, attribute.isOptional || !old.isOptional { fill = nil }
                if let oldColumn, let oldAttribute = old as? NSAttributeDescription,
                   let sql = db.conversion(oldColumn, from: oldAttribute.attributeType, to: attribute.attributeType) {
                    result.append((attribute.columnName, .converted(oldColumn, sql: sql, fill: fill)))
                } else if let oldColumn, let oldAttribute = old as? NSAttributeDescription, oldAttribute.storesExternally != attribute.storesExternally,
                          let sql = db.externalStorageConversion(oldColumn, wasExternal: oldAttribute.storesExternally) {
                    result.append((attribute.columnName, .converted(oldColumn, sql: sql, fill: fill)))
                } else if let fill {
                    result.append((attribute.columnName, .fill(oldColumn, fill)))
                } else {
                    result.append((attribute.columnName, oldColumn.map(Feed.copy) ?? .null))
                }
                continue
            }
            guard let relationship = property as? NSRelationshipDescription else { continue }
            guard let oldRelationship = old as? NSRelationshipDescription else {
                result.append((relationship.columnName, .null))
                if let entityColumn = relationship.entityColumn { result.append((entityColumn, .null)) }
                continue
            }
            guard let oldColumn else {
                // A to-many made to-one keeps one of the rows it had: the lowest key.
                guard relationship.entityColumn == nil, let target = oldRelationship.destinationEntity else {
                    throw Self.unsupported(entity, relationship, "it was a to-many relationship into a hierarchy and is a to-one now")
                }
                switch from.toManyStorage(of: oldRelationship) {
                case let .join(table, source, destination, _)?:
                    result.append((relationship.columnName, .computed(Self.joined(table, keyOf: destination, where: source))))
                case let .foreignKey(column, _, _)?:
                    result.append((relationship.columnName, .lowestKey(table: from.table(of: target), match: column)))
                case nil:
                    result.append((relationship.columnName, .null))
                }
                continue
            }
            result.append((relationship.columnName, .copy(oldColumn)))
            if let entityColumn = relationship.entityColumn {
                result.append((entityColumn, entityFeed(relationship, old: oldRelationship, key: oldColumn)))
            }
        }
        // The keys and order of to-many relationships kept in this entity's rows.
        for owner in to.entities {
            for case let relationship as NSRelationshipDescription in owner.ownProperties
            where relationship.isToMany && !relationship.isTransient && relationship.destinationEntity.map(entity.isKindOf) == true {
                guard case let .foreignKey(column, order, hidden)? = to.toManyStorage(of: relationship) else { continue }
                let old = sourceProperty(relationship.name, of: owner) as? NSRelationshipDescription
                // The owner's key as the old file has it, and the old order if there was one.
                let key: String?, oldOrder: String?
                switch old.flatMap({ from.toManyStorage(of: $0) }) {
                case let .foreignKey(oldKey, order, _)?: (key, oldOrder) = ("s." + oldKey, order)
                case let .join(table, source, destination, _)?:
                    // A many-to-many made one-to-many: the row keeps one of its owners.
                    (key, oldOrder) = (Self.joined(table, keyOf: source, where: destination), nil)
                case nil: (key, oldOrder) = (nil, nil)
                }
                if hidden { result.append((Self.unquote(column), key.map(Feed.computed) ?? .null)) }
                if let order {
                    if let oldOrder {
                        result.append((Self.unquote(order), .copy(Self.unquote(oldOrder))))
                    } else if let key {
                        result.append((Self.unquote(order), .computed(
                            "CASE WHEN \(key) IS NULL THEN NULL ELSE row_number() OVER (PARTITION BY \(key) ORDER BY s.\"Z_PK\") END")))
                    } else {
                        result.append((Self.unquote(order), .null))
                    }
                }
            }
        }
        return result
    }

    /// The lowest `keyColumn` of the old join `table`'s rows whose `rowColumn` is the source row's key.
    private static func joined(_ table: String, keyOf keyColumn: String, where rowColumn: String) -> String {
        "(SELECT min(j.\(keyColumn)) FROM \(SQLiteSchema.quoted(aside(unquote(table)))) j WHERE j.\(rowColumn) = s.\"Z_PK\")"
    }

    /// The `Z_ENT` column of a to-one relationship into a hierarchy: the old one's values
    /// renumbered, or the number of the one entity the old relationship could point to.
    private func entityFeed(_ relationship: NSRelationshipDescription, old: NSRelationshipDescription, key: String) -> Feed {
        if let oldEntityColumn = from.entityColumn(of: old).map(Self.unquote) {
            let targets = old.destinationEntity.map { $0.layout.descendants } ?? []
            let pairs = targets.compactMap { target in destinationOf[ObjectIdentifier(target)].map { (from.number(of: target), to.number(of: $0)) } }
            if pairs.allSatisfy({ $0.0 == $0.1 }) && oldEntityColumn.uppercased() == relationship.entityColumn?.uppercased() {
                return .copy(oldEntityColumn)
            }
            let cases = pairs.map { "WHEN \($0.0) THEN \($0.1)" }.joined(separator: " ")
            return .computed("CASE s.\(SQLiteSchema.quoted(oldEntityColumn)) \(cases) ELSE NULL END")
        }
        let number = old.destinationEntity.flatMap { destinationOf[ObjectIdentifier($0)] }.map { to.number(of: $0) }
        return .computed("CASE WHEN s.\(SQLiteSchema.quoted(key)) IS NULL THEN NULL ELSE \(number.map(String.init) ?? "NULL") END")
    }

    /// Throws `NSMigrationError` (134110) for a non-optional attribute or to-one relationship
    /// that would be left without a value in a row: added (an attribute without a default value),
    /// or made non-optional while rows hold `NULL`.
    private func checkMandatoryValues(_ feeds: [ObjectIdentifier: [(column: String, feed: Feed)]]) throws {
        for entity in to.entities {
            guard let source = sourceOf[ObjectIdentifier(entity)] else { continue }
            let table = from.table(of: source)
            let number = from.number(of: source)
            for property in entity.layout.properties where property.isStoredInRow && !property.isOptional {
                // An element of an optional composite: a row without the composite needs no value (validation checks the rest).
                if let leaf = property as? CompositeLeafAttribute, leaf.composite?.isOptional ?? false { continue }
                guard let feed = feeds[ObjectIdentifier(entity)]?.first(where: { $0.column == property.columnName })?.feed else { continue }
                let condition: String
                switch feed {
                case .null: condition = ""
                case .copy(let column), .converted(let column, _, nil):
                    guard sourceProperty(property.name, of: entity)?.isOptional ?? true else { continue }
                    condition = " AND s.\(SQLiteSchema.quoted(column)) IS NULL"
                case .computed:
                    // A to-many kept in a join table made a required to-one: an owner that had no member.
                    guard let old = sourceProperty(property.name, of: entity) as? NSRelationshipDescription, old.isToMany,
                          case let .join(joinTable, sourceColumn, _, _)? = from.toManyStorage(of: old) else { continue }
                    condition = " AND NOT EXISTS (SELECT 1 FROM \(joinTable) j WHERE j.\(sourceColumn) = s.\"Z_PK\")"
                case let .lowestKey(other, match):
                    // A to-many kept in its members' rows made a required to-one: the same.
                    condition = " AND NOT EXISTS (SELECT 1 FROM \(other) t WHERE t.\(match) = s.\"Z_PK\")"
                default: continue
                }
                let count = try db.scalarInt("SELECT count(*) FROM \(table) s WHERE s.\"Z_ENT\" = \(number)\(condition)", []) ?? 0
                guard count > 0 else { continue }
                let name = entity.name ?? ""
                let what = property is NSAttributeDescription ? "is non-optional and has no default value" : "is a non-optional relationship"
                throw CoreDataError.make(.migration,
                    "Can't migrate the store: \(name).\(property.name) \(what), but \(count) \(name) row(s) would have no value for it; the store was left untouched",
                    extra: ["entity": name, "property": property.name, "reason": "missing value for a non-optional property"])
            }
        }
    }

    // MARK: Entity tables

    /// The statements that migrate `table` in place with `ALTER TABLE`, or `nil` when it must be
    /// rebuilt: its rows come from one table of the same name, with the same `Z_ENT` numbers,
    /// and every column is copied from the column of the same name, filled, or added.
    private func alterPlan(_ table: SQLiteSchema.Table, family: [NSEntityDescription],
                           feeds: [ObjectIdentifier: [(column: String, feed: Feed)]]) throws -> [(String, [StoreValue])]? {
        let sources = family.compactMap { sourceOf[ObjectIdentifier($0)] }
        guard let first = sources.first, let oldTable = from.tables.first(where: { $0.root === first.rootEntity }),
              oldTable.name.uppercased() == table.name.uppercased(),
              family.allSatisfy({ entity in sourceOf[ObjectIdentifier(entity)].map { from.number(of: $0) == to.number(of: entity) } ?? true }),
              from.entities.filter({ $0.rootEntity === first.rootEntity })
                .allSatisfy({ destinationOf[ObjectIdentifier($0)].map { $0.rootEntity === table.root } ?? true })
        else { return nil }
        let name = SQLiteSchema.quoted(oldTable.name)
        var statements: [(String, [StoreValue])] = []
        let removed = from.entities.filter { $0.rootEntity === first.rootEntity && destinationOf[ObjectIdentifier($0)] == nil }
        if !removed.isEmpty {
            statements.append(("DELETE FROM \(name) WHERE \"Z_ENT\" IN (\(removed.map { String(from.number(of: $0)) }.joined(separator: ", ")))", []))
        }
        let existing = try db.columns(of: oldTable.name)
        let wanted = Set(table.columns.map { $0.name.uppercased() })
        let renamed = Self.renamedColumns(family.map { feeds[ObjectIdentifier($0)] ?? [] }, existing: existing, wanted: wanted)
        let renamedFrom = Set(renamed.values.map { $0.uppercased() })
        for column in table.columns where !existing.contains(column.name.uppercased()) {
            if let old = renamed[column.name.uppercased()] {
                statements.append(("ALTER TABLE \(name) RENAME COLUMN \(SQLiteSchema.quoted(old)) TO \(SQLiteSchema.quoted(column.name))", []))
            } else {
                statements.append(("ALTER TABLE \(name) ADD COLUMN \(SQLiteSchema.quoted(column.name)) \(db.columnType(column, of: table, in: to))", []))
            }
        }
        for column in existing where !wanted.contains(column.uppercased()) && !renamedFrom.contains(column.uppercased()) {
            statements.append(("ALTER TABLE \(name) DROP COLUMN \(SQLiteSchema.quoted(column))", []))
        }
        for entity in family {
            for (column, feed) in feeds[ObjectIdentifier(entity)] ?? [] {
                let quoted = SQLiteSchema.quoted(column)
                // The column the value is in once the ALTERs have run: its own, or the one renamed to it.
                let current = { (old: String) in old.uppercased() == column.uppercased() || renamed[column.uppercased()]?.uppercased() == old.uppercased() }
                switch feed {
                case .null: continue
                case .copy(let old) where current(old): continue
                case .fill(nil, let value):
                    statements.append(("UPDATE \(name) SET \(quoted) = ? WHERE \"Z_ENT\" = \(to.number(of: entity))", [value]))
                case .fill(let old?, let value) where current(old):
                    statements.append(("UPDATE \(name) SET \(quoted) = ? WHERE \"Z_ENT\" = \(to.number(of: entity)) AND \(quoted) IS NULL", [value]))
                default: return nil
                }
            }
        }
        return statements
    }

    /// The columns of a table kept in place that take an old column's values under a new name
    /// (an attribute or relationship renamed, through its renaming identifier): new name
    /// (upper-cased) → old column. Only where every entity of the table reads the new column from
    /// the same old one, which no entity reads for another column and the new layout does not
    /// keep: then `ALTER TABLE … RENAME COLUMN` moves the values without copying a row.
    static func renamedColumns(_ feeds: [[(column: String, feed: Feed)]], existing: [String], wanted: Set<String>) -> [String: String] {
        let existingNames = Set(existing.map { $0.uppercased() })
        var candidates: [String: String?] = [:] // new column → its one old column (nil: not one)
        var readers: [String: Set<String>] = [:] // old column → the new columns that read it
        for (column, feed) in feeds.joined() {
            let old: String?
            switch feed {
            case .copy(let name): old = name
            case .fill(let name?, _): old = name
            default: old = nil
            }
            guard let old else { continue }
            let new = column.uppercased()
            readers[old.uppercased(), default: []].insert(new)
            guard !existingNames.contains(new) else { continue }
            switch candidates[new] {
            case nil: candidates[new] = old
            case let seen?? where seen.uppercased() == old.uppercased(): break
            default: candidates[new] = .some(nil)
            }
        }
        var renamed: [String: String] = [:]
        for case let (new, old??) in candidates
        where existingNames.contains(old.uppercased()) && !wanted.contains(old.uppercased()) && readers[old.uppercased()] == [new] {
            renamed[new] = old
        }
        return renamed
    }

    /// The copies that fill a rebuilt `table`: one `INSERT … SELECT` per entity with rows.
    private func copyPlan(_ table: SQLiteSchema.Table, family: [NSEntityDescription],
                          feeds: [ObjectIdentifier: [(column: String, feed: Feed)]], kept: Set<String>) -> [(String, [StoreValue])] {
        family.compactMap { entity in
            guard let source = sourceOf[ObjectIdentifier(entity)] else { return nil }
            var columns = ["Z_PK", "Z_ENT", "Z_OPT"].map(SQLiteSchema.quoted)
            var values = ["s.\"Z_PK\"", String(to.number(of: entity)), "s.\"Z_OPT\""]
            var bindings: [StoreValue] = []
            for (column, feed) in feeds[ObjectIdentifier(entity)] ?? [] {
                let value: String
                switch feed {
                case .null: continue
                case .copy(let old): value = "s." + SQLiteSchema.quoted(old)
                case .fill(let old, let fill):
                    value = old.map { "coalesce(s.\(SQLiteSchema.quoted($0)), ?)" } ?? "?"
                    bindings.append(fill)
                case let .converted(_, sql, fill):
                    value = fill == nil ? sql : "coalesce(\(sql), ?)"
                    if let fill { bindings.append(fill) }
                case .computed(let sql): value = sql
                case let .lowestKey(other, match): value = "(SELECT min(t.\"Z_PK\") FROM \(Self.read(other, kept: kept)) t WHERE t.\(match) = s.\"Z_PK\")"
                }
                columns.append(SQLiteSchema.quoted(column))
                values.append(value)
            }
            let oldTable = Self.aside(Self.unquote(from.table(of: source)))
            let sql = "INSERT INTO \(SQLiteSchema.quoted(table.name)) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(SQLiteSchema.quoted(oldTable)) s WHERE s.\"Z_ENT\" = \(from.number(of: source))"
            return (sql, bindings)
        }
    }

    // MARK: Join tables

    /// The relationship that owns `join` in the destination model, and its old self.
    private func joinOwner(_ join: SQLiteSchema.JoinTableSpec) -> (relationship: NSRelationshipDescription, old: NSRelationshipDescription?)? {
        for entity in to.entities {
            for case let relationship as NSRelationshipDescription in entity.ownProperties
            where relationship.joinTable?.name == join.name && relationship.joinTable?.isOwner == true {
                return (relationship, sourceProperty(relationship.name, of: entity) as? NSRelationshipDescription)
            }
        }
        return nil
    }

    /// Whether the file already has `join` as the new layout makes it, for the same relationship.
    private func joinTableIsKept(_ join: SQLiteSchema.JoinTableSpec) throws -> Bool {
        guard let owner = joinOwner(join), let old = owner.old,
              let oldJoin = from.joinTables.first(where: { $0.name.uppercased() == join.name.uppercased() }),
              case let .join(table, _, _, _)? = from.toManyStorage(of: old), Self.unquote(table).uppercased() == join.name.uppercased()
        else { return false }
        return oldJoin.first.uppercased() == join.first.uppercased() && oldJoin.second.uppercased() == join.second.uppercased()
            && oldJoin.orderColumns.map { $0.uppercased() } == join.orderColumns.map { $0.uppercased() }
    }

    /// The copy that fills a rebuilt join table: from the old relationship's join table, or from
    /// the column that held the keys when one side was to-one. `kept` names the tables migrated
    /// in place, read under their own names (the others are read aside).
    private func joinCopy(_ join: SQLiteSchema.JoinTableSpec, kept: Set<String>) throws -> [(String, [StoreValue])] {
        guard let owner = joinOwner(join), let old = owner.old,
              case let .join(_, source, destination, order)? = to.toManyStorage(of: owner.relationship) else { return [] }
        func read(_ table: String) -> String { Self.read(table, kept: kept) }
        // The owner's and the member's keys in the old file, the order, and the rows to read.
        let (ownerKey, memberKey, oldOrder, from): (String, String, String?, String)
        switch self.from.toManyStorage(of: old) {
        case let .join(table, oldSource, oldDestination, order)?:
            (ownerKey, memberKey, oldOrder, from) = (oldSource, oldDestination, order, read(table) + " s")
        case let .foreignKey(column, order, _)?:
            // A one-to-many made many-to-many: each member row names its owner.
            (ownerKey, memberKey, oldOrder, from) = (column, "\"Z_PK\"", order, read(self.from.table(of: old.destinationEntity!)) + " s WHERE s.\(column) IS NOT NULL")
        case nil:
            // A to-one made to-many: each owner row names its member.
            guard let column = self.from.column(of: old) else { return [] }
            (ownerKey, memberKey, oldOrder, from) = ("\"Z_PK\"", column, nil, read(self.from.table(of: old.entity!)) + " s WHERE s.\(column) IS NOT NULL")
        }
        var columns = [source, destination], values = ["s.\(ownerKey)", "s.\(memberKey)"]
        if let order {
            columns.append(order)
            values.append(oldOrder.map { "s.\($0)" } ?? "row_number() OVER (PARTITION BY s.\(ownerKey) ORDER BY s.\(memberKey))")
        }
        return [("INSERT INTO \(SQLiteSchema.quoted(join.name)) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(from)", [])]
    }

    // MARK: The file

    static let asidePrefix = "Z_MIGRATING_"
    /// The temporary name of an old table while its rows are copied.
    static func aside(_ name: String) -> String { asidePrefix + name }

    /// `Z_PRIMARYKEY` for the new numbers: one row per destination entity, each keeping the
    /// `Z_MAX` of its source entity (a root at least its table's highest `Z_PK`), so that no key
    /// is handed out twice.
    private func rewritePrimaryKeys() throws {
        // Apple's ancillary entities (persistent history's, from 16001) keep their rows.
        let ours = "\"Z_ENT\" < \(SQLiteHistory.entityOffset)"
        var max: [ObjectIdentifier: Int64] = [:]
        for entity in to.entities {
            var value = try sourceOf[ObjectIdentifier(entity)].flatMap { $0.name }.flatMap {
                try db.scalarInt("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = ? AND \(ours)", [.string($0)])
            } ?? 0
            if entity.superentity == nil {
                value = Swift.max(value, try db.scalarInt("SELECT max(\"Z_PK\") FROM \(to.table(of: entity))", []) ?? 0)
            }
            max[ObjectIdentifier(entity)] = value
        }
        try db.execute("DELETE FROM \"Z_PRIMARYKEY\" WHERE \(ours)", [])
        for entity in to.entities {
            try db.execute("INSERT INTO \"Z_PRIMARYKEY\" (\"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\") VALUES (?, ?, ?, ?)", [
                .int(Int64(to.number(of: entity))), .string(entity.name ?? ""),
                .int(Int64(entity.superentity.map { to.number(of: $0) } ?? 0)), .int(max[ObjectIdentifier(entity)] ?? 0)])
        }
    }

    /// Persistent history's changes name their entity by its `Z_ENT` number: where the new
    /// layout numbers an entity otherwise, its changes take the new number (a removed entity's,
    /// 0: no entity), so that history fetched after the migration names the right entities.
    private func renumberHistory() throws {
        guard try db.tableNames().contains(where: { $0.uppercased() == "ACHANGE" }) else { return }
        var cases: [String] = []
        var bindings: [StoreValue] = []
        for entity in from.entities {
            let old = from.number(of: entity)
            let new = to.entities.first { sourceOf[ObjectIdentifier($0)] === entity }.map { to.number(of: $0) } ?? 0
            guard old != new else { continue }
            cases.append("WHEN ? THEN ?")
            bindings += [.int(Int64(old)), .int(Int64(new))]
        }
        guard !cases.isEmpty else { return }
        try db.execute("UPDATE \"ACHANGE\" SET \"ZENTITY\" = CASE \"ZENTITY\" \(cases.joined(separator: " ")) ELSE \"ZENTITY\" END", bindings)
    }

    /// Writes a migrated store's metadata on `db`: the store's own keys and UUID from `metadata`
    /// (the original's), the model's keys of `destination`; empties `Z_MODELCACHE`.
    static func writeMetadata(_ metadata: [String: Any], of destination: NSManagedObjectModel, to db: SQLiteConnection) throws {
        let uuid = metadata[NSStoreUUIDKey] as? String ?? UUID().uuidString
        var updated = metadata
        for (key, value) in SQLiteStore.makeMetadata(model: destination, uuid: uuid) {
            updated[key] = value
        }
        try SQLiteStore.writeMetadata(updated, uuid: uuid, to: db)
        if try SQLiteStore.tableExists("Z_MODELCACHE", in: db) { try db.execute("DELETE FROM Z_MODELCACHE") }
    }
}
