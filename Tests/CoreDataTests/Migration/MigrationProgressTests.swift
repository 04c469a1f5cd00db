import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A `Progress` that records its `fractionCompleted` each time its completed units are set:
/// an observer of `fractionCompleted` (swift-corelibs-foundation has no key-value observing).
final class RecordingProgress: Progress, @unchecked Sendable {
    private(set) var fractions: [Double] = []

    override var completedUnitCount: Int64 {
        get { super.completedUnitCount }
        set {
            super.completedUnitCount = newValue
            fractions.append(fractionCompleted)
        }
    }
}

/// A `Progress` that keeps the children attached to it, implicitly or not.
final class ParentProgress: Progress, @unchecked Sendable {
    private(set) var children: [Progress] = []

    override func addChild(_ child: Progress, withPendingUnitCount count: Int64) {
        children.append(child)
        super.addChild(child, withPendingUnitCount: count)
    }

    /// Expects one child, a migration's: `units` units, all completed, not cancellable; and
    /// this progress complete.
    func expectOneMigrationChild(units: Int64, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let child = try #require(children.first, sourceLocation: sourceLocation)
        #expect(children.count == 1, sourceLocation: sourceLocation)
        #expect(child.totalUnitCount == units && child.completedUnitCount == units, sourceLocation: sourceLocation)
        #expect(!child.isCancellable, sourceLocation: sourceLocation)
        #expect(fractionCompleted == 1, sourceLocation: sourceLocation)
    }
}

extension SQLiteLightweightMigrationTests {
    @Test func aMigrationCompletesOneUnitPerStep() throws {
        let folder = try TemporaryFolder()
        let source = M.v1()
        let url = try Self.v1Store(folder, source)
        // Person gains an attribute (altered in place), Car's year becomes a Double (rebuilt).
        let destination = M.v1()
        destination.entitiesByName["Person"]!.properties += [M.attribute("email", .stringAttributeType)]
        destination.entitiesByName["Car"]!.attributesByName["year"]!.attributeType = .doubleAttributeType
        let progress = RecordingProgress(parent: nil)
        let db = try SQLiteConnection(path: url.path, create: false)
        try db.transaction {
            let metadata = try SQLiteStore.readMetadata(db)
            let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
            try SQLiteLightweightMigration(db: db, source: source, destination: destination, mapping: mapping)
                .run(metadata: metadata, progress: progress)
        }
        // Three tables (Car, Note, Person), the indexes, the keys and metadata.
        #expect(progress.totalUnitCount == 5)
        #expect(progress.fractions == [0.2, 0.4, 0.6, 0.8, 1])
        #expect(try Self.fetch("Car", Self.open(url, destination)).map { $0.value(forKey: "year") as? Double } == [1999, 2020])
    }
}

extension AutomaticMigrationTests {
    @Test func aMigrationReportsToTheCallersCurrentProgress() throws {
        let folder = try TemporaryFolder(), models = try TemporaryFolder(), current = try TemporaryFolder()
        let url = try Self.v1Store(in: folder, models: models.url)
        let v2 = try Self.model("V2", Self.v2, in: current.url)
        let parent = ParentProgress(totalUnitCount: 10)
        parent.becomeCurrent(withPendingUnitCount: 10)
        let context = try Self.searching(models.url) { try Self.add(url, v2, options: Self.migrate) }
        parent.resignCurrent()
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Person")) == 2)
        // One child, made by the migration: a unit per table (Person, Tag), the indexes, the metadata.
        try parent.expectOneMigrationChild(units: 4)
        // A store already at the model's version: nothing to report.
        let again = ParentProgress(totalUnitCount: 1)
        again.becomeCurrent(withPendingUnitCount: 1)
        _ = try Self.searching(models.url) { try Self.add(url, v2, options: Self.migrate) }
        again.resignCurrent()
        #expect(again.children.isEmpty && again.fractionCompleted == 1)
    }
}
