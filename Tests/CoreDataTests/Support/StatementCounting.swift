import Foundation
import Synchronization
@testable import CoreData

extension TestStack {
    /// How many read statements the stack's SQLite store has run so far.
    var readStatements: Int {
        (coordinator.persistentStores.first as? SQLiteStore)?.readStatementCount.load(ordering: .relaxed) ?? 0
    }

    /// How many of the context's registered objects hold row data (fired or carrying their row).
    var objectsWithData: Int {
        context.registeredObjects.filter { $0._hasData }.count
    }
}
