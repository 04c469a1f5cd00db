import Foundation
import Testing
@testable import CoreData

/// Every merge policy, on optimistic-locking conflicts and on uniqueness-constraint conflicts.
@Suite("Merge policies")
struct MergePolicyTests {
    /// A car saved with name "a", year 1950, price 10; then another stack changes `year` to 1960
    /// and `price` to 20 behind this context's back, while this context changes `name` to "b"
    /// and `year` to 1970. Returns the row after this context's save with `policy`.
    private func lockingConflict(_ policy: Any) throws -> (row: [String?], object: NSManagedObject, context: NSManagedObjectContext) {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1950, "price": 10.0])
        try stack.context.save()
        let other = try stack.reopen()
        let mirror = try other.fetch("Car")[0]
        mirror.setValue(1960, forKey: "year")
        mirror.setValue(20.0, forKey: "price")
        try other.context.save()

        car.setValue("b", forKey: "name")
        car.setValue(1970, forKey: "year")
        stack.context.mergePolicy = policy
        try stack.context.save()
        let row = try RawSQLite.query(stack.url.path, "SELECT ZNAME, ZYEAR, ZPRICE, Z_OPT FROM ZCAR").first!
        return (row, car, stack.context)
    }

    @Test func objectTrumpKeepsTheObjectsChangesAndTakesTheRest() throws {
        let (row, car, context) = try lockingConflict(NSMergeByPropertyObjectTrumpMergePolicy)
        #expect(row == ["b", "1970", "20.0", "3"])
        #expect(car.value(forKey: "price") as? Double == 20)
        #expect(!context.hasChanges)
    }

    @Test func storeTrumpLetsTheStoresChangesWin() throws {
        let (row, car, _) = try lockingConflict(NSMergeByPropertyStoreTrumpMergePolicy)
        // name: changed only here → kept; year: changed in both → the store's; price: the store's.
        #expect(row == ["b", "1960", "20.0", "3"])
        #expect(car.value(forKey: "year") as? Int == 1960)
    }

    @Test func overwriteWritesTheWholeObject() throws {
        let (row, _, _) = try lockingConflict(NSOverwriteMergePolicy)
        #expect(row == ["b", "1970", "10.0", "3"], "even the price the object did not change is written back")
    }

    @Test func rollbackDiscardsTheObjectsChanges() throws {
        let (row, car, context) = try lockingConflict(NSRollbackMergePolicy)
        #expect(row == ["a", "1960", "20.0", "2"], "nothing of ours was written")
        #expect(car.value(forKey: "name") as? String == "a")
        #expect(!context.hasChanges)
    }

    @Test func errorPolicyThrowsWithTheConflictsAndKeepsTheChanges() throws {
        #expect(throws: NSError.self) { try lockingConflict(NSErrorMergePolicy) }
        do { _ = try lockingConflict(NSMergePolicy(merge: .errorMergePolicyType)) } catch let error as NSError {
            #expect(error.code == NSManagedObjectMergeError)
            let conflict = try #require((error.userInfo["conflictList"] as? [NSMergeConflict])?.first)
            #expect(conflict.cachedSnapshot?["year"] as? Int == 1950)
            #expect(conflict.persistedSnapshot?["year"] as? Int == 1960)
            #expect(conflict.objectSnapshot?["year"] as? Int == 1970)
            // To-one relationships too (as object IDs; none here), not to-many ones.
            #expect(conflict.objectSnapshot?["owner"] is NSNull)
            #expect(conflict.objectSnapshot?["tags"] == nil)
            #expect((conflict.oldVersionNumber, conflict.newVersionNumber) == (1, 2))
        }
    }

    @Test func aRowDeletedElsewhereLeavesTheContext() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let other = try stack.reopen()
        other.context.delete(try other.fetch("Car")[0])
        try other.context.save()
        car.setValue("b", forKey: "name")
        stack.context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try stack.context.save()
        #expect(car.managedObjectContext == nil)
        #expect(try RawSQLite.query(stack.url.path, "SELECT count(*) FROM ZCAR").first! == ["0"])
    }

    @Test func aDeleteThatMetAChangedRow() throws {
        for (policy, remaining) in [(NSMergeByPropertyObjectTrumpMergePolicy, "0"), (NSRollbackMergePolicy, "1")] {
            let stack = try TestStack()
            let car = stack.insert("Car", ["name": "a"])
            try stack.context.save()
            let other = try stack.reopen()
            try other.fetch("Car")[0].setValue("changed", forKey: "name")
            try other.context.save()
            stack.context.delete(car)
            stack.context.mergePolicy = policy
            try stack.context.save()
            #expect(try RawSQLite.query(stack.url.path, "SELECT count(*) FROM ZCAR").first! == [remaining])
        }
    }

    /// A custom policy: the year is the larger of the two, everything else as object trump.
    final class LargestYearPolicy: NSMergePolicy, @unchecked Sendable {
        nonisolated(unsafe) static var seen = 0
        init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }
        override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
            Self.seen += list.count
            for conflict in list {
                let stored = conflict.persistedSnapshot?["year"] as? Int ?? 0
                let mine = conflict.sourceObject.value(forKey: "year") as? Int ?? 0
                conflict.sourceObject.setValue(max(stored, mine), forKey: "year")
            }
            try super.resolve(optimisticLockingConflicts: list)
        }
    }

    @Test func customSubclassesSeeTheConflicts() throws {
        LargestYearPolicy.seen = 0
        let (row, _, _) = try lockingConflict(LargestYearPolicy())
        #expect(LargestYearPolicy.seen == 1)
        #expect(row == ["b", "1970", "20.0", "3"])
    }

    /// A policy that overrides only `resolve(mergeConflicts:)`, as many apps' do: the store's
    /// year when it is larger, then the superclass's rules.
    final class MergeConflictsPolicy: NSMergePolicy, @unchecked Sendable {
        nonisolated(unsafe) static var seen: [String] = []
        init() { super.init(merge: .mergeByPropertyObjectTrumpMergePolicyType) }
        override func resolve(mergeConflicts list: [Any]) throws {
            Self.seen += list.map { "\(type(of: $0))" }
            for case let conflict as NSMergeConflict in list {
                conflict.sourceObject.setValue("resolved", forKey: "name")
            }
            try super.resolve(mergeConflicts: list)
        }
    }

    @Test func aSaveCallsResolveMergeConflictsWhichSubclassesOverride() throws {
        MergeConflictsPolicy.seen = []
        let (row, _, _) = try lockingConflict(MergeConflictsPolicy())
        #expect(MergeConflictsPolicy.seen == ["NSMergeConflict"])
        #expect(row == ["resolved", "1970", "20.0", "3"])

        // Uniqueness conflicts come through it too.
        MergeConflictsPolicy.seen = []
        let stack = try constrainedStack()
        stack.insert("Tag", ["label": "x"])
        try stack.context.save()
        stack.insert("Tag", ["label": "x"])
        stack.context.mergePolicy = MergeConflictsPolicy()
        try stack.context.save()
        #expect(MergeConflictsPolicy.seen == ["NSConstraintConflict"])
        #expect(try tags(stack).count == 1)
    }

    /// A delete-and-reinsert of a unique value whose row another context changed meanwhile: the
    /// version conflict is the policy's to resolve (it used to end in a bare 133021, every time).
    @Test(arguments: TestStoreKind.available)
    func aConflictIsReportedBeforeAnInsertMeetsItsRowsUniqueValue(_ kind: TestStoreKind) throws {
        let model = TestModel.make()
        model.entitiesByName["Person"]!.uniquenessConstraints = [["name"]]
        let stack = try TestStack(kind, model: model)
        let ada = stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        let other = try stack.reopen()
        try other.fetch("Person")[0].setValue(40, forKey: "age")
        try other.context.save()
        stack.context.delete(ada)
        stack.insert("Person", ["name": "Ada", "age": 1])
        stack.context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try stack.context.save()
        #expect(try stack.rawRows("SELECT \"ZNAME\", \"ZAGE\" FROM \"ZPERSON\"") == [["Ada", "1"]])
    }

    // MARK: Uniqueness constraints

    private func constrainedStack() throws -> TestStack {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        return try TestStack(model: model)
    }

    private func tags(_ stack: TestStack) throws -> [[String?]] {
        try RawSQLite.query(stack.url.path, "SELECT Z_PK, ZLABEL FROM ZTAG ORDER BY Z_PK")
    }

    @Test func constraintConflictsThrowWithTheirListUnderTheErrorPolicy() throws {
        let stack = try constrainedStack()
        stack.insert("Tag", ["label": "red"])
        try stack.context.save()
        let duplicate = stack.insert("Tag", ["label": "red"])
        do {
            try stack.context.save()
            Issue.record("should conflict")
        } catch let error as NSError {
            #expect(error.code == NSManagedObjectConstraintMergeError)
            let conflict = try #require((error.userInfo["conflictList"] as? [NSConstraintConflict])?.first)
            #expect(conflict.constraint == ["label"])
            #expect(conflict.constraintValues["label"] as? String == "red")
            #expect(conflict.conflictingObjects == [duplicate])
            #expect(conflict.databaseObject?.value(forKey: "label") as? String == "red")
            #expect(conflict.databaseSnapshot?["label"] as? String == "red")
        }
        #expect(try tags(stack) == [["1", "red"]])
    }

    @Test func objectTrumpTurnsADuplicateInsertIntoAnUpdate() throws {
        let stack = try constrainedStack()
        let car = stack.insert("Car", ["name": "old car"])
        let original = stack.insert("Tag", ["label": "red"])
        original.mutableSetValue(forKey: "cars").add(car)
        try stack.context.save()
        let newCar = stack.insert("Car", ["name": "new car"])
        let duplicate = stack.insert("Tag", ["label": "red"])
        duplicate.mutableSetValue(forKey: "cars").add(newCar)
        stack.context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try stack.context.save()
        #expect(try tags(stack) == [["1", "red"]], "one row, the original key")
        #expect(duplicate.managedObjectContext == nil)
        let reopened = try stack.reopen()
        let tag = try reopened.fetch("Tag").first!
        #expect(Set((tag.value(forKey: "cars") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "name") as? String } ?? []) == ["old car", "new car"],
                "the new object's members joined the stored row's")
    }

    @Test func storeTrumpAndRollbackKeepTheStoredRow() throws {
        for policy in [NSMergeByPropertyStoreTrumpMergePolicy, NSRollbackMergePolicy] {
            let stack = try constrainedStack()
            stack.insert("Tag", ["label": "red"])
            try stack.context.save()
            let duplicate = stack.insert("Tag", ["label": "red"])
            stack.insert("Tag", ["label": "blue"])
            stack.context.mergePolicy = policy
            try stack.context.save()
            #expect(try tags(stack).map { $0[1] } == ["red", "blue"])
            #expect(duplicate.managedObjectContext == nil)
        }
    }

    @Test func duplicatesWithinOneSave() throws {
        for (policy, winner) in [(NSMergeByPropertyObjectTrumpMergePolicy, "second"), (NSMergeByPropertyStoreTrumpMergePolicy, "first")] {
            let stack = try constrainedStack()
            let first = stack.insert("Tag", ["label": "red"])
            let second = stack.insert("Tag", ["label": "red"])
            let firstCar = stack.insert("Car", ["name": "first"])
            let secondCar = stack.insert("Car", ["name": "second"])
            first.mutableSetValue(forKey: "cars").add(firstCar)
            second.mutableSetValue(forKey: "cars").add(secondCar)
            stack.context.mergePolicy = policy
            try stack.context.save()
            #expect(try tags(stack).count == 1)
            let reopened = try stack.reopen()
            let tag = try reopened.fetch("Tag").first!
            #expect(Set((tag.value(forKey: "cars") as? Set<NSManagedObject>)?.compactMap { $0.value(forKey: "name") as? String } ?? []) == ["first", "second"],
                    "the \(winner) tag stayed, with the other's car too")
        }
    }

    @Test("A stored object changed in other properties is the stored row of a conflict, and keeps its change", arguments: [
        NSMergePolicyType.mergeByPropertyStoreTrumpMergePolicyType, .rollbackMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType,
    ])
    func aStoredObjectWithOtherChangesKeepsThem(_ type: NSMergePolicyType) throws {
        let model = TestModel.make()
        model.entitiesByName["Person"]!.uniquenessConstraints = [["name"]]
        let stack = try TestStack(model: model)
        let ada = stack.insert("Person", ["name": "Ada", "age": 30])
        try stack.context.save()
        ada.setValue(31, forKey: "age")
        let duplicate = stack.insert("Person", ["name": "Ada"])
        stack.context.mergePolicy = NSMergePolicy(merge: type)
        try stack.context.save()
        #expect(duplicate.managedObjectContext == nil && ada.managedObjectContext === stack.context)
        // (Overwrite pushes the whole new object: its default age.)
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME, ZAGE FROM ZPERSON") == [["Ada", type == .overwriteMergePolicyType ? "0" : "31"]])
        // Under the error policy, the conflict names the stored row.
        stack.context.mergePolicy = NSErrorMergePolicy
        ada.setValue(32, forKey: "age")
        stack.insert("Person", ["name": "Ada"])
        let error = #expect(throws: NSError.self) { try stack.context.save() }
        let conflict = try #require((error?.userInfo["conflictList"] as? [NSConstraintConflict])?.first)
        #expect(conflict.databaseObject === ada && conflict.conflictingObjects.count == 1)
    }

    @Test("An object renamed onto a stored value takes the stored holder's members before the holder is deleted", arguments: [
        NSMergePolicyType.mergeByPropertyObjectTrumpMergePolicyType, .overwriteMergePolicyType,
    ])
    func aRenameOntoAStoredValueKeepsTheHoldersMembers(_ type: NSMergePolicyType) throws {
        let model = TestModel.make()
        model.entitiesByName["Person"]!.uniquenessConstraints = [["name"]]
        let stack = try TestStack(model: model)
        let ada = stack.insert("Person", ["name": "Ada"])
        let bob = stack.insert("Person", ["name": "Bob"])
        stack.insert("Car", ["name": "T", "owner": ada])
        try stack.context.save()
        bob.setValue("Ada", forKey: "name")
        stack.context.mergePolicy = NSMergePolicy(merge: type)
        try stack.context.save()
        // Person.cars cascades: the car would have gone with the stored Ada.
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME FROM ZPERSON") == [["Ada"]])
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZCAR.ZNAME, ZPERSON.Z_PK = \(bob.objectID.uriRepresentation().lastPathComponent.dropFirst()) FROM ZCAR JOIN ZPERSON ON ZCAR.ZOWNER = ZPERSON.Z_PK") == [["T", "1"]])
    }

    @Test("A duplicate insert's children move to the stored row it loses to, not cascade away with it", arguments: [
        NSMergePolicyType.mergeByPropertyStoreTrumpMergePolicyType, .rollbackMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
    ])
    func aLosingDuplicatesChildrenMoveToTheStoredRow(_ type: NSMergePolicyType) throws {
        let model = TestModel.make()
        model.entitiesByName["Person"]!.uniquenessConstraints = [["name"]]
        let stack = try TestStack(model: model)
        stack.insert("Person", ["name": "Ada"])
        try stack.context.save()
        let duplicate = stack.insert("Person", ["name": "Ada"])
        stack.insert("Car", ["name": "new", "owner": duplicate])
        stack.context.mergePolicy = NSMergePolicy(merge: type)
        try stack.context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZCAR.ZNAME, ZPERSON.ZNAME FROM ZCAR JOIN ZPERSON ON ZCAR.ZOWNER = ZPERSON.Z_PK") == [["new", "Ada"]])
    }

    @Test func constraintConflictsInTheInMemoryStoreToo() throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model, inMemory: true)
        stack.insert("Tag", ["label": "red"])
        try stack.context.save()
        stack.insert("Tag", ["label": "red"])
        #expect { try stack.context.save() } throws: { ($0 as NSError).userInfo["conflictList"] is [NSConstraintConflict] }
        stack.context.mergePolicy = NSMergeByPropertyObjectTrumpMergePolicy
        try stack.context.save()
        #expect(try stack.fetch("Tag").count == 1)
    }

    @Test("A losing duplicate's many-to-many members move to the stored row and leave the duplicate, so its cascade rule does not take them")
    func aLosingDuplicatesManyToManyMembersSurvive() throws {
        let model = TestModel.make()
        let tag = model.entitiesByName["Tag"]!
        tag.uniquenessConstraints = [["label"]]
        (tag.relationshipsByName["cars"]!).deleteRule = .cascadeDeleteRule
        let stack = try TestStack(model: model)
        let stored = stack.insert("Tag", ["label": "red"])
        stored.mutableSetValue(forKey: "cars").add(stack.insert("Car", ["name": "old"]))
        try stack.context.save()
        let duplicate = stack.insert("Tag", ["label": "red"])
        duplicate.mutableSetValue(forKey: "cars").add(stack.insert("Car", ["name": "new"]))
        stack.context.mergePolicy = NSMergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType)
        try stack.context.save()
        let reopened = try stack.reopen()
        #expect(Set(try reopened.fetch("Car").compactMap { $0.value(forKey: "name") as? String }) == ["old", "new"])
        let tags = try reopened.fetch("Tag")
        #expect(tags.count == 1 && (tags.first?.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
    }
}
