import CoreDataExamples
import Foundation
import Testing
@testable import CoreData

@Suite("coredata inspect")
struct StoreInspectorTests {
    @Test func reportsMetadataEntitiesAndCounts() throws {
        let stack = try TestStack()
        for i in 0..<3 { stack.insert("Car", ["name": "\(i)"]) }
        stack.insert("Truck", ["load": 1.0])
        let tag = stack.insert("Tag", ["label": "x"])
        tag.mutableSetValue(forKey: "cars").add(stack.insert("Car", ["name": "tagged"]))
        try stack.context.save()
        let report = try StoreInspector(url: stack.url).report()
        #expect(report.contains("UUID: \(stack.coordinator.persistentStores[0].identifier!)"))
        #expect(report.contains("Type: SQLite"))
        let carLine = try #require(report.split(separator: "\n").first { $0.contains(" Car ") })
        #expect(carLine.contains(" 4 "))
        #expect(carLine.contains(stack.model.entitiesByName["Car"]!.versionHash.base64EncodedString()))
        let truckLine = try #require(report.split(separator: "\n").first { $0.contains(" Truck ") })
        #expect(truckLine.contains("Vehicle") && truckLine.contains(" 1 "))
        #expect(report.contains("TAGS: 1 rows"))
        #expect(report.contains("Journal mode: wal"))
    }

    /// History's bookkeeping entities (16001…) are listed as history with their tables' rows,
    /// not as entities without a table; an R-tree fetch index and its shadow tables are no join
    /// tables.
    @Test func historyAndRTreeTablesAreNotEntitiesOrJoinTables() throws {
        let stack = try TestStack(options: [NSPersistentHistoryTrackingKey: true])
        stack.insert("Car", ["name": "a"])
        try stack.context.save()
        try RawSQLite.execute(stack.url.path, "CREATE VIRTUAL TABLE Z_Car_byLocation USING rtree(Z_PK, ZLAT_MIN, ZLAT_MAX)")
        let report = try StoreInspector(url: stack.url).report()
        #expect(!report.contains("CHANGE ") && !report.split(separator: "\n").contains { $0.hasPrefix("16001") }, "\(report)")
        #expect(report.contains("Persistent history:") && report.contains("ATRANSACTION: 1 rows") && report.contains("ACHANGE: 1 rows"), "\(report)")
        #expect(!report.contains("Z_Car_byLocation"), "\(report)")
    }

    @Test func refusesFilesThatAreNotStores() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-store-\(UUID().uuidString).sqlite")
        try Data("hello".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: NSError.self) { try StoreInspector(url: url).report() }
    }

    /// A damaged file: an error, not a report that leaves rows out with exit status 0; a cycle
    /// in `Z_SUPER` ends (it looped for ever).
    @Test func aDamagedStoreIsAnErrorAndACycleEnds() throws {
        let stack = try TestStack()
        for i in 0..<3000 { stack.insert("Car", ["name": "car \(i) with a name long enough to fill pages"]) }
        try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        let cycled = try stack.reopen()
        try cycled.coordinator.remove(cycled.coordinator.persistentStores[0])
        try RawSQLite.execute(stack.url.path, "UPDATE Z_PRIMARYKEY SET Z_SUPER = (SELECT max(Z_ENT) FROM Z_PRIMARYKEY WHERE Z_ENT < 16000) WHERE Z_ENT = 1; UPDATE Z_PRIMARYKEY SET Z_SUPER = 1 WHERE Z_ENT = (SELECT max(Z_ENT) FROM Z_PRIMARYKEY WHERE Z_ENT < 16000); PRAGMA wal_checkpoint(TRUNCATE)")
        _ = try StoreInspector(url: stack.url).report() // ends
        // Pages of the car table overwritten.
        let handle = try FileHandle(forWritingTo: stack.url)
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 3 * 4096))
        try handle.close()
        #expect(throws: NSError.self) { try StoreInspector(url: stack.url).report() }
    }
}
