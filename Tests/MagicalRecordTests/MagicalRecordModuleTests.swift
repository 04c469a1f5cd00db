import CoreData
import MagicalRecord
import Testing

/// The module builds and links on top of CoreData.
@Suite struct MagicalRecordModuleTests {
    @Test func theModuleImports() {
        #expect(MagicalRecord.self == MagicalRecord.self)
    }
}
