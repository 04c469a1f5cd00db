import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A fault the store cannot fulfill (the store failed, not: the row is gone) is never silent:
/// the accessor returns what the object has, the context records and logs the error, the next
/// save throws it, and nothing is written from a relationship that failed to load.
///
/// The store is made to fail by hiding a table of its file behind its back (renamed away, and
/// back), by taking the store from its coordinator, or by moving away the file behind an
/// external binary value.
@Suite("Faults the store cannot fulfill")
struct UnfulfilledFaultTests {
    /// Renames `table` of the store's file away: every read of it fails until ``show(_:in:)``.
    func hide(_ table: String, in stack: TestStack) throws {
        try RawSQLite.execute(stack.url.path, "ALTER TABLE \(table) RENAME TO \(table)_HIDDEN")
    }

    func show(_ table: String, in stack: TestStack) throws {
        try RawSQLite.execute(stack.url.path, "ALTER TABLE \(table)_HIDDEN RENAME TO \(table)")
    }

    /// The fault error a save throws (134070, Apple's message, the store's error underneath).
    func expectUnfulfilled(_ body: () throws -> Void, naming id: NSManagedObjectID, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: NSError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.domain == NSCocoaErrorDomain, sourceLocation: sourceLocation)
        #expect(error?.code == NSPersistentStoreOperationError, sourceLocation: sourceLocation)
        #expect(error?.localizedDescription.hasPrefix("CoreData could not fulfill a fault for '\(id)'") == true,
                "\(error?.localizedDescription ?? "")", sourceLocation: sourceLocation)
        #expect(error?.userInfo[NSUnderlyingErrorKey] is NSError, sourceLocation: sourceLocation)
    }

    /// A person "Ann" with cars "a" and "b", saved; and a second stack on the file, whose
    /// coordinator has no row of it cached.
    func annWithTwoCars() throws -> (stack: TestStack, reader: TestStack) {
        let stack = try TestStack()
        let ann = stack.insert("Person", ["name": "Ann"])
        for name in ["a", "b"] { stack.insert("Car", ["name": name, "owner": ann]) }
        try stack.context.save()
        return (stack, try stack.reopen())
    }

    @Test func aToManyThatFailedReadsEmptyIsNotKeptAndTheNextSaveThrows() throws {
        let (stack, reader) = try annWithTwoCars()
        let ann = try #require(try reader.fetch("Person").first)
        try hide("ZCAR", in: stack)
        #expect((ann.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true, "what it has")
        expectUnfulfilled({ try reader.context.save() }, naming: ann.objectID)
        try show("ZCAR", in: stack)
        // Not kept as loaded: read again, and then the save has nothing against it.
        #expect((ann.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
        ann.setValue(41, forKey: "age")
        try reader.context.save()
        #expect(try stack.rows("SELECT ZAGE FROM ZPERSON") == [["41"]])
    }

    @Test func aCascadeOverAListThatFailedToLoadWritesNothing() throws {
        let (stack, reader) = try annWithTwoCars()
        let ann = try #require(try reader.fetch("Person").first)
        try hide("ZCAR", in: stack)
        reader.context.delete(ann)
        reader.context.processPendingChanges() // the cascade, over a list the store could not read
        try show("ZCAR", in: stack)
        expectUnfulfilled({ try reader.context.save() }, naming: ann.objectID)
        #expect(try stack.rows("SELECT count(*) FROM ZPERSON") == [["1"]])
        #expect(try stack.rows("SELECT ZNAME FROM ZCAR ORDER BY ZNAME") == [["a"], ["b"]])
        // Rolled back, the record goes; the delete then cascades over the cars.
        reader.context.rollback()
        reader.context.delete(ann)
        try reader.context.save()
        #expect(try stack.rows("SELECT count(*) FROM ZCAR") == [["0"]])
    }

    @Test func aDenyRuleOverAListThatFailedToLoadLetsNothingThrough() throws {
        let stack = try TestStack()
        let garage = stack.insert("Garage", ["city": "Paris"])
        stack.insert("Truck", ["garage": garage])
        try stack.context.save()
        let reader = try stack.reopen()
        let fetched = try #require(try reader.fetch("Garage").first)
        try hide("ZVEHICLE", in: stack)
        reader.context.delete(fetched) // validated at the save: its vehicles, counted over nothing
        let error = #expect(throws: NSError.self) { try reader.context.save() }
        try show("ZVEHICLE", in: stack)
        #expect(error?.code == NSPersistentStoreOperationError)
        #expect(try stack.rows("SELECT count(*) FROM ZGARAGE") == [["1"]])
    }

    @Test func anOrderedListBuiltOnAFailedLoadIsNeverWritten() throws {
        let stack = try TestStack()
        let list = stack.insert("Playlist", ["title": "mix"])
        list.setValue(NSOrderedSet(array: [stack.insert("Song", ["title": "one"]), stack.insert("Song", ["title": "two"])]), forKey: "songs")
        try stack.context.save()
        let reader = try stack.reopen()
        let playlist = try #require(try reader.fetch("Playlist").first)
        try hide("ZSONG", in: stack)
        // A new song joins the list through its inverse: the list the store could not read is
        // built from nothing, with the new song first.
        let three = NSEntityDescription.insertNewObject(forEntityName: "Song", into: reader.context)
        three.setValue("three", forKey: "title")
        three.setValue(playlist, forKey: "playlist")
        try show("ZSONG", in: stack)
        let order = "SELECT ZTITLE, Z_FOK_PLAYLIST FROM ZSONG ORDER BY ZTITLE"
        let before = try stack.rows(order)
        expectUnfulfilled({ try reader.context.save() }, naming: playlist.objectID)
        // A refresh that keeps the changed list keeps its record.
        reader.context.refresh(playlist, mergeChanges: true)
        expectUnfulfilled({ try reader.context.save() }, naming: playlist.objectID)
        #expect(try stack.rows(order) == before)
        reader.context.rollback()
        #expect((playlist.value(forKey: "songs") as? NSOrderedSet)?.array.map { ($0 as! NSManagedObject).value(forKey: "title") as? String } == ["one", "two"])
        try reader.context.save()
    }

    @Test func aManyToManyReplacedOverAFailedLoadIsNeverWritten() throws {
        let (stack, join) = try GoneRowTests.carTaggedT1AndT2()
        let reader = try stack.reopen()
        let fetched = try #require(try reader.fetch("Car").first)
        try hide(join, in: stack)
        let t3 = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: reader.context)
        fetched.setValue(Set([t3]), forKey: "tags") // t1 and t2 would stay: the list had no members to take out
        try show(join, in: stack)
        expectUnfulfilled({ try reader.context.save() }, naming: fetched.objectID)
        #expect(try stack.rows("SELECT count(*) FROM \(join)") == [["2"]])
        #expect(try stack.rows("SELECT count(*) FROM ZTAG") == [["2"]])
    }

    /// A row whose external binary value's file is gone: the store throws 260 for it.
    @Test func aRowTheStoreCannotReadLeavesAFaultThatTriesAgainAndKeepsItsChanges() throws {
        let stack = try TestStack(model: ExternalBinaryStorageTests.makeModel())
        let photo = try ExternalBinaryStorageTests.insert(stack, "p", ExternalBinaryStorageTests.large)
        let id = photo.objectID
        let folder = stack.directory.appendingPathComponent(".Test_SUPPORT/_EXTERNAL_DATA")
        let file = try #require(try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).first)
        let away = stack.directory.appendingPathComponent("away")
        try FileManager.default.moveItem(at: file, to: away)

        let reader = try stack.reopen()
        let fault = reader.context.object(with: id)
        #expect(fault.value(forKey: "name") == nil, "what it has")
        #expect(fault.isFault && !fault.isDeleted, "a fault still: not a deleted object")
        let thrown = #expect(throws: NSError.self) { try reader.context.existingObject(with: id) }
        #expect(thrown?.code == NSPersistentStoreOperationError)
        #expect((thrown?.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == CocoaError.fileReadNoSuchFile.rawValue)
        expectUnfulfilled({ try reader.context.save() }, naming: id)

        // A value given meanwhile stays on top of the row when it loads.
        fault.setValue("renamed", forKey: "name")
        try FileManager.default.moveItem(at: away, to: file)
        #expect(fault.value(forKey: "image") as? Data == ExternalBinaryStorageTests.large)
        #expect(fault.value(forKey: "name") as? String == "renamed")
        #expect(!fault.isFault)
        try reader.context.save() // the successful load cleared the record
        #expect(try stack.rows("SELECT ZNAME FROM ZPHOTO") == [["renamed"]])
        let again = try stack.reopen()
        #expect(try again.fetch("Photo").first?.value(forKey: "image") as? Data == ExternalBinaryStorageTests.large)
    }

    @Test func aBatchTheStoreCannotReadLoadsItsFaultsOneByOne() throws {
        let stack = try TestStack(model: ExternalBinaryStorageTests.makeModel())
        try ExternalBinaryStorageTests.insert(stack, "a", Data([1]))
        let broken = try ExternalBinaryStorageTests.insert(stack, "b", ExternalBinaryStorageTests.large).objectID
        try ExternalBinaryStorageTests.insert(stack, "c", Data([3]))
        let folder = stack.directory.appendingPathComponent(".Test_SUPPORT/_EXTERNAL_DATA")
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) {
            try FileManager.default.removeItem(at: file)
        }
        let reader = try stack.reopen()
        let photos = try reader.fetch("Photo") { $0.fetchBatchSize = 10; $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)] }
        #expect(photos.map { $0.value(forKey: "name") as? String } == ["a", nil, "c"])
        #expect(photos[1].isFault && !photos[1].isDeleted)
        expectUnfulfilled({ try reader.context.save() }, naming: broken)
    }

    @Test func recordsGoWithRollbackResetARefreshOrTheNextLoad() throws {
        let (stack, reader) = try annWithTwoCars()
        let context = reader.context
        try hide("ZCAR", in: stack)
        var ann = try #require(try reader.fetch("Person").first)
        _ = ann.value(forKey: "cars")
        #expect(throws: NSError.self) { try context.save() }
        context.rollback()
        try context.save()

        _ = ann.value(forKey: "cars")
        #expect(throws: NSError.self) { try context.save() }
        context.reset()
        try context.save()

        ann = try #require(try reader.fetch("Person").first)
        _ = ann.value(forKey: "cars")
        #expect(throws: NSError.self) { try context.save() }
        context.refresh(ann, mergeChanges: false)
        try context.save()

        _ = ann.value(forKey: "cars")
        #expect(throws: NSError.self) { try context.save() }
        try show("ZCAR", in: stack)
        #expect((ann.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
        try context.save()
    }

    @Test func aStoreRemovedFromItsCoordinator() throws {
        let (stack, reader) = try annWithTwoCars()
        defer { withExtendedLifetime(stack) {} } // (its folder holds the file)
        let id = try #require(try reader.fetch("Person").first).objectID
        reader.context.reset()
        let store = try #require(reader.coordinator.persistentStores.first)
        let fault = reader.context.object(with: id)
        try reader.coordinator.remove(store)
        #expect(fault.value(forKey: "name") == nil)
        expectUnfulfilled({ try reader.context.save() }, naming: id)
    }

    @Test func aChildsFailedLoadIsItsOwnAndItsParentTakesNothingItCannotRead() throws {
        let (stack, reader) = try annWithTwoCars()
        let (parent, child) = reader.parentAndChild()
        try child.performAndWait {
            let ann = try #require(try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first)
            try hide("ZCAR", in: stack)
            #expect((ann.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
            expectUnfulfilled({ try child.save() }, naming: ann.objectID)
            try show("ZCAR", in: stack)
            #expect((ann.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)

            // The parent reads the members of a relationship the child changed before it takes
            // the change: if the store fails, the child's save throws and the parent takes nothing.
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            car.setValue("c", forKey: "name")
            ann.mutableSetValue(forKey: "cars").add(car)
            parent.performAndWait { parent.refresh(parent.object(with: ann.objectID), mergeChanges: false) } // its list forgotten
            try hide("ZCAR", in: stack)
            expectUnfulfilled({ try child.save() }, naming: ann.objectID)
            try show("ZCAR", in: stack)
            #expect(parent.performAndWait { !parent.hasChanges })
            try child.save()
        }
        try parent.performAndWait { try parent.save() }
        #expect(try stack.rows("SELECT count(*) FROM ZCAR WHERE ZOWNER IS NOT NULL") == [["3"]])
    }

    /// A merge policy that keeps the store from reading while the policy works.
    final class FailingWhileResolving: NSMergePolicy, @unchecked Sendable {
        let during: () throws -> Void
        let after: () throws -> Void
        init(during: @escaping () throws -> Void, after: @escaping () throws -> Void) {
            self.during = during
            self.after = after
            super.init(merge: .rollbackMergePolicyType)
        }
        override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
            try during()
            defer { try? after() }
            try super.resolve(optimisticLockingConflicts: list)
        }
    }

    /// The rollback policy puts a changed to-many back as the store has it: if the store cannot
    /// read it, the relationship stays and the save throws (an empty list would have taken every
    /// car from its owner).
    @Test func aMergePolicyThatCannotReadTheStoresRelationshipWritesNothing() throws {
        let (stack, _) = try annWithTwoCars()
        let context = stack.newContext()
        let ann = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).first)
        _ = ann.value(forKey: "cars")
        let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
        car.setValue("c", forKey: "name")
        ann.mutableSetValue(forKey: "cars").add(car)
        // Another context changes Ann meanwhile: a conflict.
        let other = try stack.fetch("Person")[0]
        other.setValue("Anne", forKey: "name")
        try stack.context.save()

        context.mergePolicy = FailingWhileResolving(during: { try hide("ZCAR", in: stack) }, after: { try show("ZCAR", in: stack) })
        expectUnfulfilled({ try context.save() }, naming: ann.objectID)
        #expect(try stack.rows("SELECT ZNAME, ZOWNER FROM ZCAR ORDER BY ZNAME") == [["a", "1"], ["b", "1"]])
    }

    /// Each failure is logged once, in Apple's form, however often it is met.
    @Test func aFailureIsLoggedOnce() async throws {
        let folder = try TemporaryFolder()
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [path = folder.path as String] in
            let stack = try TestStack(directory: URL(fileURLWithPath: path))
            let ann = stack.insert("Person", ["name": "Ann"])
            try stack.context.save()
            stack.context.refresh(ann, mergeChanges: false)
            try RawSQLite.execute(stack.url.path, "ALTER TABLE ZCAR RENAME TO ZCAR_HIDDEN")
            for _ in 0..<3 { _ = ann.value(forKey: "cars") }
            _ = try? stack.context.save()
        }
        withExtendedLifetime(folder) {}
        let log = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let lines = log.split(separator: "\n").filter { $0.hasPrefix("CoreData: error:") && $0.contains("could not fulfill a fault for") }
        #expect(lines.count == 1, "\(log)")
        #expect(lines.first?.contains("'cars'") == true)
    }
}
