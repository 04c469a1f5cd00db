import CSQLite
import Foundation

/// The SQL functions that triggers in stores written by Apple's framework call, registered on
/// every connection so that writing such a file works here too.
///
/// Apple's store computes derived attributes (and tracks some changes) with triggers in the file,
/// which call functions its own connections register: `NSCoreDataNow()` (the time, in seconds
/// since 2001-01-01) and three functions that tell Apple's framework which objects a trigger
/// changed, `NSCoreDataTriggerUpdateAffectedObjectValue`,
/// `NSCoreDataDATriggerUpdatedAffectedObjectValue` and
/// `NSCoreDataDATriggerInsertUpdatedAffectedObjectValue` (five arguments each). Without them, an
/// insert or update of such a table fails with "no such function". Here the time function returns
/// the time and the three others do nothing: this package computes derived values in the saving
/// context, and the triggers' own updates of the row still run.
internal enum SQLiteTriggerFunctions {
    static let notifiers = ["NSCoreDataTriggerUpdateAffectedObjectValue", "NSCoreDataDATriggerUpdatedAffectedObjectValue",
                            "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue"]

    static func register(on db: OpaquePointer) {
        sqlite3_create_function_v2(db, "NSCoreDataNow", 0, SQLITE_UTF8, nil, { context, _, _ in
            sqlite3_result_double(context, Date().timeIntervalSinceReferenceDate)
        }, nil, nil, nil)
        for name in notifiers {
            sqlite3_create_function_v2(db, name, 5, SQLITE_UTF8, nil, { context, _, _ in
                sqlite3_result_null(context)
            }, nil, nil, nil)
        }
    }
}
