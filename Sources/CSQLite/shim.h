#include <sqlite3.h>

/// Turns off SQLite's fallback that reads a double-quoted name it cannot resolve as a string
/// literal (`SELECT "ZNMAE"` would select the text 'ZNMAE'): the store quotes every identifier,
/// so a missing column must be an error, never a silent constant. (A C function: Swift cannot
/// call the variadic `sqlite3_db_config`.)
static inline void coredata_sqlite_strict_quotes(sqlite3 *db) {
#ifdef SQLITE_DBCONFIG_DQS_DML
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
#endif
}
