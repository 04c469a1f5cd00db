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

    @Test func refusesFilesThatAreNotStores() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-store-\(UUID().uuidString).sqlite")
        try Data("hello".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: NSError.self) { try StoreInspector(url: url).report() }
    }
}
