import Foundation

// The SQL that reads a to-many relationship's members, shared by the SQLite and PostgreSQL
// stores: `key` and `entity` name the fixed `Z_PK` and `Z_ENT` columns as each store writes
// them (bare in SQLite, quoted in PostgreSQL).
extension SQLiteSchema {
    /// `SELECT Z_PK, Z_ENT` of the members of `relationship` of one owner (bound to the one `?`),
    /// in the relationship's order; `nil` when this file has no storage for it.
    func relatedIDsQuery(_ relationship: NSRelationshipDescription, key: String = "Z_PK", entity: String = "Z_ENT") -> String? {
        guard let destination = relationship.destinationEntity else { return nil }
        let table = self.table(of: destination)
        switch toManyStorage(of: relationship) {
        case let .join(join, source, member, order)?:
            let order = order.map { "j.\($0), " } ?? ""
            return "SELECT t.\(key), t.\(entity) FROM \(join) j JOIN \(table) t ON t.\(key) = j.\(member) WHERE j.\(source) = ? ORDER BY \(order)t.\(key)"
        case let .foreignKey(column, order, _)?:
            let order = order.map { "\($0), " } ?? ""
            return "SELECT \(key), \(entity) FROM \(table) WHERE \(column) = ? ORDER BY \(order)\(key)"
        case nil:
            return nil
        }
    }

    /// Where the member rows of `relationship` are read for many owners at once: the `FROM`
    /// clause (the destination's table aliased `t0`), the column holding each row's owner, and
    /// the order to put after the owner's (empty, or ending in `, `); `nil` without storage.
    func relatedRowsSource(_ relationship: NSRelationshipDescription, key: String = "Z_PK") -> (from: String, owner: String, order: String)? {
        guard let destination = relationship.destinationEntity else { return nil }
        let table = self.table(of: destination)
        switch toManyStorage(of: relationship) {
        case let .join(join, source, member, joinOrder)?:
            return ("\(join) j JOIN \(table) t0 ON t0.\(key) = j.\(member)", "j.\(source)", joinOrder.map { "j.\($0), " } ?? "")
        case let .foreignKey(column, keyOrder, _)?:
            return ("\(table) t0", "t0.\(column)", keyOrder.map { "t0.\($0), " } ?? "")
        case nil:
            return nil
        }
    }
}
