import Foundation
import Testing
@testable import CoreData

@Suite("Review: IDs across coordinators")
struct ReviewCoordinatorTests {
    /// An ID from coordinator A used in a context of coordinator B reads and writes A's store
    /// under B's lock (the ID holds A's store strongly and the coordinator routes by it).
    @Test func idFromAnotherCoordinatorIsNotServedThroughItsStore() throws {
        let a = try TestStack(), b = try TestStack()
        a.insert("Car", ["name": "in A"]); try a.context.save()
        let id = try a.fetch("Car")[0].objectID
        #expect(throws: (any Error).self) { try b.context.existingObject(with: id) }
        let foreign = b.context.object(with: id)
        foreign.setValue("written through B", forKey: "name")
        _ = try? b.context.save()
        #expect(try RawSQLite.query(a.url.path, "SELECT ZNAME FROM ZCAR").first?[0] == "in A")
    }
}
