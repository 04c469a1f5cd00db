import Foundation
import Testing
@testable import CoreData

@Suite("Optimistic locking through Z_OPT")
struct OptimisticLockingTests {
    @Test func conflictingSaveThrowsMergeErrorWithConflictList() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a", "year": 1950])
        try stack.context.save()
        let other = try stack.reopen()
        let mirror = try other.fetch("Car")[0]
        mirror.setValue(1960, forKey: "year")
        try other.context.save()

        car.setValue("b", forKey: "name")
        do {
            try stack.context.save()
            Issue.record("should conflict")
        } catch let error as NSError {
            #expect(error.code == NSManagedObjectMergeError)
            let conflicts = try #require(error.userInfo["conflictList"] as? [NSMergeConflict])
            #expect(conflicts.count == 1)
            #expect(conflicts[0].sourceObject === car)
            #expect(conflicts[0].oldVersionNumber == 1)
            #expect(conflicts[0].newVersionNumber == 2)
            #expect(conflicts[0].persistedSnapshot?["year"] as? Int == 1960)
        }
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME, ZYEAR, Z_OPT FROM ZCAR").first! == ["a", "1960", "2"])
        #expect(stack.context.hasChanges, "changes are kept for the caller to resolve")
        stack.context.refresh(car, mergeChanges: true)
        try stack.context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME, ZYEAR, Z_OPT FROM ZCAR").first! == ["b", "1960", "3"])
    }

    @Test func deletingARowChangedElsewhereConflicts() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        let other = try stack.reopen()
        let mirror = try other.fetch("Car")[0]
        mirror.setValue("z", forKey: "name")
        try other.context.save()
        stack.context.delete(car)
        #expect(throws: NSError.self) { try stack.context.save() }
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME FROM ZCAR").first?[0] == "z")
    }

    @Test func versionsIncrementPerSave() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        try stack.context.save()
        for i in 0..<3 {
            car.setValue("v\(i)", forKey: "name")
            try stack.context.save()
        }
        #expect(try RawSQLite.query(stack.url.path, "SELECT Z_OPT FROM ZCAR").first?[0] == "4")
    }
}
