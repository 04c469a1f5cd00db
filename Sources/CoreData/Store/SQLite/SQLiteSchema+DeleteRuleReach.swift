import Foundation

// The rows a batch delete through the delete rules will write (``SQLiteSchema/deleteWithRules(_:root:using:)``),
// found before it writes any: the PostgreSQL store locks them all in its global order first
// (`PostgreSQLStore+RowLocks.swift`), as a save does, so that a batch delete and a save (or
// another batch delete) of related rows wait for each other instead of crossing.

extension SQLiteSchema {
    /// The keys of the rows that deleting the rows `keys` (of `root`'s table) through the delete
    /// rules writes, by root entity: those rows, the rows the cascade rule reaches from them
    /// (transitively), and the rows whose foreign key to any of these is cleared. Read only,
    /// with `sql`'s ``BatchDeleteStatements/readKeys``; a deny rule is left to the delete itself.
    /// (Join-table rows are not rows of an entity and are not listed.)
    func rowsReachedByDeleteRules(_ keys: [FetchedKey], root: NSEntityDescription,
                                  using sql: BatchDeleteStatements) throws -> [ObjectIdentifier: (root: NSEntityDescription, keys: Set<Int64>)] {
        var reached: [ObjectIdentifier: (root: NSEntityDescription, keys: Set<Int64>)] = [:]
        var deleting: [ObjectIdentifier: Set<Int64>] = [:]
        /// Notes `rows` of `root`'s table as written.
        func note(_ rows: [FetchedKey], of root: NSEntityDescription) {
            reached[ObjectIdentifier(root), default: (root, [])].keys.formUnion(rows.map(\.primaryKey))
        }
        /// Notes `rows` of `root`'s table as deleted; the ones not noted as deleted before.
        func delete(_ rows: [FetchedKey], of root: NSEntityDescription) -> [FetchedKey] {
            note(rows, of: root)
            return rows.filter { deleting[ObjectIdentifier(root), default: []].insert($0.primaryKey).inserted }
        }
        var pending: [(root: NSEntityDescription, keys: [FetchedKey])] = [(root, delete(keys, of: root))]
        while let (root, deleted) = pending.popLast() {
            guard !deleted.isEmpty else { continue }
            let all = sql.keyList(deleted.map(\.primaryKey))
            // The cascade rule's rows are deleted in turn.
            for entity in self.entities where entity.rootEntity === root && deleted.contains(where: { $0.entity === entity }) {
                let own = sql.keyList(deleted.filter { $0.entity === entity }.map(\.primaryKey))
                for index in entity.layout.relationshipIndexes {
                    guard let relationship = entity.layout.properties[index] as? NSRelationshipDescription,
                          relationship.deleteRule == .cascadeDeleteRule, let destination = relationship.destinationEntity,
                          let query = relatedKeysSQL(relationship, sql) else { continue }
                    pending.append((destination.rootEntity, delete(try sql.readKeys(query, own), of: destination.rootEntity)))
                }
            }
            // The rows whose foreign key to the deleted rows is cleared (the statements of `deleteWithRules`).
            for entity in self.entities {
                for case let relationship as NSRelationshipDescription in entity.ownProperties {
                    guard let destination = relationship.destinationEntity else { continue }
                    if !relationship.isToMany, destination.rootEntity === root, let column = storage(of: entity).columns[relationship.index] {
                        let query = "SELECT \(sql.pk), \(sql.ent) FROM \(table(of: entity)) WHERE \(column) IN \(sql.keySet)"
                        note(try sql.readKeys(query, all), of: entity.rootEntity)
                    } else if relationship.isToMany, entity.rootEntity === root,
                              case let .foreignKey(column, _, true)? = toManyStorage(of: relationship) {
                        let query = "SELECT \(sql.pk), \(sql.ent) FROM \(table(of: destination)) WHERE \(column) IN \(sql.keySet)"
                        note(try sql.readKeys(query, all), of: destination.rootEntity)
                    }
                }
            }
        }
        return reached
    }
}
