import CoreDataExamples
import Foundation
import Testing
@testable import CoreData
import TestSupport

/// `coredata inspect STORE --model PATH.xcdatamodeld` (`StoreInspector.versionReport(model:)`).
@Suite("coredata inspect --model")
struct StoreInspectorVersionTests {
    /// A store written by version `name` of the Garage fixture.
    static func store(writtenBy name: String) throws -> TestStack {
        let stack = try TestStack(model: ModelVersionsTests.version(name))
        stack.insert("Car", ["name": "Beetle"])
        try stack.context.save()
        return stack
    }

    @Test func namesTheVersionThatWroteTheStore() throws {
        let stack = try Self.store(writtenBy: "Garage 2")
        let report = try StoreInspector(url: stack.url).versionReport(model: ModelVersionsTests.garage)
        let checksum = try ModelVersionsTests.version("Garage 2").versionChecksum
        #expect(report.contains("Written by version: Garage 2 (version identifiers: 2.0; checksum \(checksum))"), "\(report)")

        let v1 = try Self.store(writtenBy: "Garage")
        #expect(try StoreInspector(url: v1.url).versionReport(model: ModelVersionsTests.garage).contains("Written by version: Garage (version identifiers: 1.0;"))
        // One version given on its own.
        let single = ModelVersionsTests.garage.appendingPathComponent("Garage 2.xcdatamodel")
        #expect(try StoreInspector(url: stack.url).versionReport(model: single).contains("Written by version: Garage 2 ("))
    }

    @Test func saysNoVersionWroteTheStoreAndWhichEntitiesDiffer() throws {
        let stack = try Self.store(writtenBy: "Garage 2")
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let bundle = try ModelVersionsTests.garageCopy(in: folder)
        try FileManager.default.removeItem(at: bundle.appendingPathComponent("Garage 2.xcdatamodel"))
        let report = try StoreInspector(url: stack.url).versionReport(model: bundle)
        let lines = report.split(separator: "\n").map(String.init)
        #expect(lines.contains("Written by version: none of the 2 versions of Garage.xcdatamodeld"), "\(report)")
        #expect(lines.contains("  Garage: entities that differ: Car (changed)"), "\(report)")
        #expect(lines.contains("  Garage 3: entities that differ: Car (changed), Owner (not in the store)"), "\(report)")
    }

    @Test func refusesAModelThatCannotBeRead() throws {
        let stack = try Self.store(writtenBy: "Garage")
        let missing = stack.directory.appendingPathComponent("Missing.xcdatamodeld")
        #expect(throws: NSError.self) { try StoreInspector(url: stack.url).versionReport(model: missing) }
        let folder = try TemporaryFolder()
        defer { withExtendedLifetime(folder) {} }
        let bundle = try ModelVersionsTests.garageCopy(in: folder)
        try Data("<model".utf8).write(to: bundle.appendingPathComponent("Garage 3.xcdatamodel/contents"))
        // One broken version is named with why; the others are still compared (the report gave
        // up on the whole model).
        let report = try StoreInspector(url: stack.url).versionReport(model: bundle)
        #expect(report.contains("Written by version: Garage ("), "\(report)")
        #expect(report.contains("  Garage 3: can't be read: ") && report.contains("Garage 3.xcdatamodel"), "\(report)")
        // Every version broken: the first one's error.
        for name in ["Garage", "Garage 2"] {
            try Data("<model".utf8).write(to: bundle.appendingPathComponent("\(name).xcdatamodel/contents"))
        }
        do {
            _ = try StoreInspector(url: stack.url).versionReport(model: bundle)
            Issue.record("a broken model was not reported")
        } catch let error as NSError {
            #expect(error.code == 259 && error.localizedDescription.contains("Garage.xcdatamodel"), "\(error)")
        }
    }
}
