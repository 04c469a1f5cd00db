import Foundation

/// What the PostgreSQL store adds to its database when it opens: the fold function of `[c]`/`[d]`
/// (``PostgreSQLFoldFunction``) and the collations of localized sorts (``PostgreSQLCollations``).
///
/// Both are Unicode (the function's tables, ICU's collations), so the store creates them only
/// in a database whose encoding is `UTF8`, by a role that may create in the schema; each under a
/// savepoint of the opening's transaction, so that one the server refuses is left missing (a query
/// that needs it then throws 134091 saying why) and the store opens all the same.
///
/// ```swift
/// let state = try connection.execute("SELECT \(PostgreSQLDatabaseObjects.mayCreate)", [])
/// if state.text(0, 0) == "t" { try PostgreSQLDatabaseObjects.create(sql, on: connection) }
/// ```
enum PostgreSQLDatabaseObjects {
    /// A `SELECT` column, `t` where the store may create them: the database is `UTF8` and the
    /// role has the CREATE privilege on the current schema.
    static let mayCreate = "current_setting('server_encoding') = 'UTF8' AND coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)"

    /// Why a query found one missing, for its 134091.
    static let whyMissing = "the store creates it when it opens a database whose encoding is UTF8, as a role with the CREATE privilege on the schema"

    /// Runs `sql` (a `CREATE`) under a savepoint: a statement the server refuses is rolled back
    /// and leaves the transaction usable; a connection that fails throws.
    static func create(_ sql: String, on connection: any PostgreSQLConnection) throws(PostgreSQLError) {
        try connection.run("SAVEPOINT cd_create")
        do {
            try connection.run(sql)
        } catch {
            try connection.run("ROLLBACK TO SAVEPOINT cd_create")
        }
        try connection.run("RELEASE SAVEPOINT cd_create")
    }
}
