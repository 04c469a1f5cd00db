import Foundation
import Testing
@testable import CoreData

/// Core Data's version numbers, as Apple's `CoreDataDefines.h` gives them.
@Suite struct CoreDataDefinesTests {
    @Test func theVersionIsNewerThanEveryReleasedConstantAndIsWhatStoresRecord() throws {
        #expect(NSCoreDataVersionNumber == 1414)
        #expect(NSCoreDataVersionNumber > NSCoreDataVersionNumber_iPhoneOS_9_3)
        #expect(NSCoreDataVersionNumber > NSCoreDataVersionNumber10_11_3)
        #expect(NSCoreDataVersionNumber10_4 == 46.0 && NSCoreDataVersionNumber10_7_2 == 358.12)
        #expect(NSCoreDataVersionNumber_iPhoneOS_4_1 == 320.11 && NSCoreDataVersionNumber_iPhoneOS_9_2 == 641.4)
        let stack = try TestStack()
        let metadata = stack.coordinator.metadata(for: stack.coordinator.persistentStores[0])
        #expect(metadata["NSPersistenceFrameworkVersion"] as? Int == Int(NSCoreDataVersionNumber))
    }
}
