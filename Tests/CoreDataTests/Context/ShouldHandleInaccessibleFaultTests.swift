import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A context that records what `shouldHandleInaccessibleFault(_:for:triggeredByProperty:)` is
/// asked, and answers `answer`.
final class InaccessibleFaultRecordingContext: NSManagedObjectContext, @unchecked Sendable {
    var asked: [(fault: NSManagedObject, id: NSManagedObjectID, property: String?)] = []
    var answer = true

    override func shouldHandleInaccessibleFault(_ fault: NSManagedObject, for oid: NSManagedObjectID,
                                                triggeredByProperty property: NSPropertyDescription?) -> Bool {
        asked.append((fault, oid, property?.name))
        return answer
    }
}

/// `NSManagedObjectContext.shouldHandleInaccessibleFault(_:for:triggeredByProperty:)`: asked when
/// a fault whose row is gone fires, with the property whose use fired it.
@Suite struct ShouldHandleInaccessibleFaultTests {
    /// Runs `body` with a saved person whose row was then deleted behind the context's back, and
    /// a recording context on the file (through a second stack, whose row cache never saw the
    /// row) with the person as a fault; the stacks (the first owns the folder) live until it ends.
    static func withGoneOwner(_ body: (TestStack, InaccessibleFaultRecordingContext, NSManagedObject) throws -> Void) throws {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "Ann"])
        try stack.context.save()
        let id = ann.objectID
        try RawSQLite.execute(stack.url.path, "DELETE FROM ZPERSON")
        let reader = try stack.reopen()
        let context = InaccessibleFaultRecordingContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = reader.coordinator
        let fault = context.object(with: reader.coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation())!)
        try withExtendedLifetime((stack, reader)) { try body(stack, context, fault) }
    }

    @Test func askedOnceWithThePropertyReadAndTheObjectReadsAsDeleted() throws {
        try Self.withGoneOwner { _, context, owner in
            #expect(owner.value(forKey: "name") == nil)
            #expect(context.asked.count == 1)
            #expect(context.asked.first?.fault === owner && context.asked.first?.id == owner.objectID)
            #expect(context.asked.first?.property == "name")
            #expect(owner.isDeleted && context.deletedObjects == [owner])
            _ = owner.value(forKey: "age") // loaded now: not asked again
            #expect(context.asked.count == 1)
        }
    }

    @Test func thePropertyIsTheRelationshipOrSetterThatFiredIt() throws {
        try Self.withGoneOwner { _, context, owner in
            #expect((owner.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
            #expect(context.asked.map(\.property) == ["cars"])
        }
        try Self.withGoneOwner { _, context, owner in
            owner.setValue(3, forKey: "age")
            #expect(context.asked.map(\.property) == ["age"])
        }
        try Self.withGoneOwner { _, context, owner in
            _ = owner.isDeleted // no fault fired
            owner.willAccessValue(forKey: nil)
            #expect(context.asked.count == 1 && context.asked.first?.property == nil)
        }
    }

    @Test func theDefaultAnswersShouldDeleteInaccessibleFaults() throws {
        try Self.withGoneOwner { stack, _, recorded in
            let context = stack.newContext() // not a subclass: Apple's default answer
            let owner = context.object(with: recorded.objectID)
            #expect(context.shouldHandleInaccessibleFault(owner, for: owner.objectID, triggeredByProperty: nil))
            context.shouldDeleteInaccessibleFaults = false
            #expect(!context.shouldHandleInaccessibleFault(owner, for: owner.objectID, triggeredByProperty: nil))
            #expect(owner.isFault) // asking fires nothing
        }
    }

    @Test func existingObjectThrowsWithoutAsking() throws {
        try Self.withGoneOwner { _, context, owner in
            #expect(throws: NSError.self) { try context.existingObject(with: owner.objectID) }
            #expect(context.asked.isEmpty)
        }
    }

    @Test func deletingItRunsItsRulesWithoutAsking() throws {
        try Self.withGoneOwner { stack, context, owner in
            context.answer = false // asking would stop the process
            context.delete(owner)
            context.processPendingChanges() // the cascade reads `cars`: the fault fires
            #expect(context.asked.isEmpty)
            #expect(owner.isDeleted)
            try context.save()
            #expect(try stack.rows("SELECT COUNT(*) FROM ZPERSON") == [["0"]])
        }
    }

    @Test func answeringFalseStopsTheProcess() async throws {
        await #expect(processExitsWith: .signal(SIGILL)) {
            try! ShouldHandleInaccessibleFaultTests.withGoneOwner { _, context, owner in
                context.answer = false
                _ = owner.value(forKey: "name")
            }
            exit(0) // not reached
        }
    }
}
