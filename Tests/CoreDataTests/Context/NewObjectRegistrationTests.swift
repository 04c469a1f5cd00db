import Foundation
import Testing
@testable import CoreData

/// A new object enters the registry under its temporary ID only when that ID is made (the
/// `objectID` getter): these check that it is found, listed and forgotten as if it had been
/// registered at insertion.
@Suite("Registration of new objects")
struct NewObjectRegistrationTests {
    @Test func aTemporaryIDFindsItsObject() throws {
        let stack = try TestStack()
        let context = stack.context
        let car = stack.insert("Car", ["name": "a"])
        let id = car.objectID
        #expect(id.isTemporaryID)
        #expect(context.registeredObject(for: id) === car)
        #expect(context.object(with: id) === car)
        #expect(try context.existingObject(with: id) === car)
        // An ID made before the object was inserted.
        let early = NSManagedObject(entity: stack.model.entitiesByName["Car"]!, insertInto: nil)
        let earlyID = early.objectID
        context.insert(early)
        #expect(context.registeredObject(for: earlyID) === early)
        #expect(try context.existingObject(with: earlyID) === early)
        try context.save()
        #expect(context.registeredObject(for: car.objectID) === car)
        #expect(!car.objectID.isTemporaryID)
        #expect(context.registeredObject(for: early.objectID) === early)
    }

    /// A saved object leaves its temporary key, if it had one, as it takes its permanent one:
    /// the temporary ID finds nothing any more, among objects that never made theirs.
    @Test func aSavedObjectLeavesItsTemporaryKey() throws {
        let stack = try TestStack()
        let context = stack.context
        let cars = (0..<5).map { stack.insert("Car", ["name": "car \($0)"]) }
        let temporary = cars[2].objectID
        try context.save()
        #expect(context.registeredObject(for: temporary) == nil)
        #expect(context.registryCount == cars.count, "one registration each")
        for car in cars {
            #expect(!car.objectID.isTemporaryID)
            #expect(context.registeredObject(for: car.objectID) === car)
        }
    }

    @Test func temporaryIDsNumberObjectsInInsertionOrder() throws {
        let stack = try TestStack()
        let cars = (0..<5).map { stack.insert("Car", ["name": "\($0)"]) }
        // IDs asked for in reverse order still number the objects as they were inserted.
        let serials = cars.reversed().map(\.objectID.key.value).reversed()
        #expect(Array(serials) == Array(serials).sorted())
        #expect(Set(serials).count == 5)
    }

    @Test func registeredObjectsListNewObjectsOnce() throws {
        let stack = try TestStack()
        let context = stack.context
        let plain = stack.insert("Car", ["name": "plain"])
        let asked = stack.insert("Car", ["name": "asked"])
        _ = asked.objectID
        let deleted = stack.insert("Car", ["name": "deleted"])
        context.delete(deleted) // not processed yet: still registered
        #expect(context.registeredObjects == [plain, asked, deleted])
        context.processPendingChanges()
        #expect(context.registeredObjects == [plain, asked])
        #expect(deleted.managedObjectContext == nil)
        try context.save()
        #expect(context.registeredObjects == [plain, asked])
    }

    @Test func deletingANewObjectForgetsItsTemporaryID() throws {
        let stack = try TestStack()
        let context = stack.context
        let car = stack.insert("Car", ["name": "a"])
        let id = car.objectID
        context.delete(car)
        #expect(context.registeredObject(for: id) === car)
        context.processPendingChanges()
        #expect(context.registeredObject(for: id) == nil)
        #expect(throws: NSError.self) { try context.existingObject(with: id) }
    }

    @Test func resetRollbackAndDeinitDetachNewObjects() throws {
        let stack = try TestStack()
        let context = stack.context
        let plain = stack.insert("Car", ["name": "plain"])
        let asked = stack.insert("Car", ["name": "asked"])
        let askedID = asked.objectID
        let recorder = InvalidatedRecorder(context)
        context.reset()
        let invalidated = recorder.ids
        #expect(plain.managedObjectContext == nil && asked.managedObjectContext == nil)
        #expect(Set(invalidated) == [plain.objectID, askedID])
        #expect(invalidated.count == 2)
        #expect(context.registeredObjects.isEmpty)

        let again = stack.insert("Car", ["name": "again"])
        context.rollback()
        #expect(again.managedObjectContext == nil)
        #expect(context.registeredObjects.isEmpty)

        var child: NSManagedObjectContext? = stack.newContext()
        let orphan = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child!)
        child = nil
        #expect(orphan.managedObjectContext == nil, "the context's deinit detached its new object")
        _ = orphan.objectID // no context to register in
    }

    @Test func retainedNewObjectsStayRegisteredAfterTheSave() throws {
        let stack = try TestStack()
        let context = stack.newContext()
        context.retainsRegisteredObjects = true
        var ids: [NSManagedObjectID] = []
        do {
            let cars = (0..<3).map { i -> NSManagedObject in
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
                car.setValue("\(i)", forKey: "name")
                return car
            }
            try context.save()
            ids = cars.map(\.objectID)
        }
        #expect(context.registeredObjects.count == 3)
        for id in ids { #expect(context.registeredObject(for: id) != nil) }
    }

    @Test func obtainPermanentIDsRegistersNewObjectsUnderThem() throws {
        let stack = try TestStack()
        let context = stack.context
        let cars = (0..<3).map { stack.insert("Car", ["name": "\($0)"]) }
        try context.obtainPermanentIDs(for: cars)
        let ids = cars.map(\.objectID)
        #expect(ids.allSatisfy { !$0.isTemporaryID })
        for (car, id) in zip(cars, ids) { #expect(context.registeredObject(for: id) === car) }
        try context.save()
        #expect(cars.map(\.objectID) == ids)
        for (car, id) in zip(cars, ids) { #expect(context.registeredObject(for: id) === car) }
        #expect(try RawSQLite.query(stack.url.path, "SELECT COUNT(*) FROM ZCAR") == [["3"]])
    }

    /// A child reads the parent's new object (whose ID the parent made for it), changes it and
    /// saves: the parent's object itself takes the change, found by its temporary ID.
    @Test func aChildUpdatesItsParentsNewObject() throws {
        let stack = try TestStack()
        let (parent, child) = stack.parentAndChild()
        let car = parent.performAndWait { () -> NSManagedObject in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: parent)
            car.setValue("parent", forKey: "name")
            return car
        }
        try child.performAndWait {
            let cars = try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
            #expect(cars.count == 1)
            cars[0].setValue("child", forKey: "name")
            try child.save()
        }
        try parent.performAndWait {
            #expect(parent.registeredObjects == [car])
            #expect(car.value(forKey: "name") as? String == "child")
            try parent.save()
            #expect(!car.objectID.isTemporaryID)
        }
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZNAME FROM ZCAR") == [["child"]])
    }

    /// Saved objects enter the registry's table at its next use: they leave the waiting list
    /// as they die in save order, and anything else (a death out of order, a lookup) moves the
    /// rest into the table.
    @Test func savedObjectsRegisteredLaterAreFoundAndLeave() throws {
        let stack = try TestStack()
        let entity = stack.model.entitiesByName["Car"]!
        let objects = (0..<10).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
        var registry = ObjectRegistry()
        func key(_ n: Int, store: Int = 1) -> IDKey { IDKey(store: store, root: 1, value: Int64(n + 1)) }
        for (n, object) in objects.enumerated() { registry.registerLater(Unmanaged.passUnretained(object), key: key(n)) }
        let other = NSManagedObject(entity: entity, insertInto: nil)
        registry.registerLater(Unmanaged.passUnretained(other), key: key(0, store: 2)) // another owner: into the table
        #expect(registry.count == 11)
        func address(_ object: NSManagedObject) -> UnsafeMutableRawPointer { Unmanaged.passUnretained(object).toOpaque() }
        registry.remove(key(0), ifObjectAt: address(objects[0]))
        registry.remove(key(1), ifObjectAt: address(objects[1]))
        #expect(registry.count == 9)
        registry.remove(key(2), ifObjectAt: address(objects[5])) // not its key: nothing leaves
        #expect(registry.count == 9)
        registry.remove(key(5), ifObjectAt: address(objects[5])) // out of order
        #expect(registry.count == 8)
        for n in [0, 1, 5] { #expect(registry[key(n)] == nil) }
        for n in [2, 3, 4, 6, 7, 8, 9] { #expect(registry[key(n)]?.takeUnretainedValue() === objects[n]) }
        #expect(registry[key(0, store: 2)]?.takeUnretainedValue() === other)
        #expect(registry.objects().count == 8)
        // A lookup first, then the deaths: from the table.
        registry.registerLater(Unmanaged.passUnretained(objects[0]), key: key(0))
        #expect(registry[key(0)]?.takeUnretainedValue() === objects[0])
        registry.remove(key(0), ifObjectAt: address(objects[0]))
        #expect(registry[key(0)] == nil)
        #expect(registry.count == 8)
    }

    /// After a save, the app keeps some of the new objects and drops the others in no
    /// particular order: lookups, fetches and registeredObjects find exactly the kept ones.
    @Test func savedObjectsKeptAndDroppedInAnyOrder() throws {
        let stack = try TestStack()
        let context = stack.newContext()
        var cars: [NSManagedObject?] = (0..<300).map { i in
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("car \(i)", forKey: "name")
            return car
        }
        try context.save()
        let ids = cars.map { $0!.objectID }
        for i in stride(from: 299, through: 0, by: -1) where i % 3 != 0 { cars[i] = nil } // last first
        let kept = cars.compactMap { $0 }
        #expect(kept.count == 100)
        #expect(context.registeredObjects == Set(kept))
        for (i, id) in ids.enumerated() where i % 3 == 0 { #expect(context.registeredObject(for: id) === cars[i]) }
        for (i, id) in ids.enumerated() where i % 3 != 0 { #expect(context.registeredObject(for: id) == nil) }
        let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect(fetched.count == 300)
        #expect(Set(fetched).isSuperset(of: kept))
        // Saved in order and dropped in the same order: the usual import.
        var more: [NSManagedObject]? = (0..<50).map { _ in NSEntityDescription.insertNewObject(forEntityName: "Car", into: context) }
        try context.save()
        let moreIDs = more!.map(\.objectID)
        more = nil
        for id in moreIDs { #expect(context.registeredObject(for: id) == nil) }
        #expect(try context.existingObject(with: moreIDs[7]).objectID == moreIDs[7])
    }

    /// Saved objects that nothing else holds die at the end of the save and leave the registry,
    /// inserted and updated alike; those the app keeps stay.
    @Test func objectsDyingAtTheEndOfASaveLeaveTheRegistry() throws {
        let stack = try TestStack()
        let context = stack.newContext()
        var kept: [NSManagedObject] = []
        for i in 0..<300 {
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("car \(i)", forKey: "name")
            if i % 7 == 0 { kept.append(car) }
        }
        try context.save()
        #expect(context.registeredObjects == Set(kept))
        for car in kept { #expect(context.registeredObject(for: car.objectID) === car && car.managedObjectContext === context) }
        let keptIDs = Set(kept.map(\.objectID))

        // Fetched, changed and let go before the save: they die as it ends.
        var fetchedIDs: [NSManagedObjectID] = []
        do {
            let fetched = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
            #expect(fetched.count == 300)
            for car in fetched { car.setValue("renamed", forKey: "name") }
            fetchedIDs = fetched.map(\.objectID)
        }
        try context.save()
        #expect(context.registeredObjects == Set(kept))
        for id in fetchedIDs where !keptIDs.contains(id) { #expect(context.registeredObject(for: id) == nil) }
        let again = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect(again.count == 300)
        #expect(Set(again).isSuperset(of: kept))
        #expect(again.allSatisfy { $0.value(forKey: "name") as? String == "renamed" })
        #expect(Set(again.map(\.objectID)).count == 300)
    }

    /// An object that another dying object's `deinit` takes back (through a weak reference)
    /// as a save's objects go lives on, registered. (Each of the two watches the other: the
    /// one that dies first, whichever it is, takes the other back.)
    @Test func anObjectTakenBackWhileASaveLetsGoStaysRegistered() throws {
        let model = TestModel.make()
        model.entitiesByName["Car"]!.managedObjectClassName = String(reflecting: ReclaimingCar.self)
        let stack = try TestStack(model: model)
        let context = stack.newContext()
        var watchedID: NSManagedObjectID?
        do {
            let first = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            first.setValue("first", forKey: "name")
            let second = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            second.setValue("second", forKey: "name")
            ReclaimingCar.watched = [.init(first), .init(second)]
        }
        try context.save()
        ReclaimingCar.watched = []
        do {
            let reclaimed = try #require(ReclaimingCar.reclaimed)
            watchedID = reclaimed.objectID
            #expect(["first", "second"].contains(reclaimed.value(forKey: "name") as? String))
            #expect(reclaimed.managedObjectContext === context)
            #expect(context.registeredObject(for: watchedID!) === reclaimed)
            #expect(context.registeredObjects == [reclaimed])
        }
        // Let go of now, it leaves the registry from its own deinit.
        do {
            // (Taken out of the static first: its deinit reads the static.)
            let taken = ReclaimingCar.reclaimed
            ReclaimingCar.reclaimed = nil
            withExtendedLifetime(taken) {}
        }
        #expect(context.registeredObjects.isEmpty)
        #expect(context.registeredObject(for: watchedID!) == nil)
        #expect(["first", "second"].contains(try context.existingObject(with: watchedID!).value(forKey: "name") as? String))
    }

    /// The objects of a change set are handed out as an array that later changes of the set
    /// leave as it was (without removed objects it is the set's own buffer).
    @Test func changeSetObjectsAreSnapshots() throws {
        let stack = try TestStack()
        let entity = stack.model.entitiesByName["Car"]!
        let objects = (0..<5).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
        var set = OrderedObjectSet()
        for object in objects.prefix(3) { set.insert(object) }
        let first = set.objects
        #expect(first.map(ObjectIdentifier.init) == objects.prefix(3).map(ObjectIdentifier.init))
        set.insert(objects[3])
        set.remove(objects[0])
        let second = set.objects
        #expect(first.map(ObjectIdentifier.init) == objects.prefix(3).map(ObjectIdentifier.init))
        #expect(second.map(ObjectIdentifier.init) == objects[1...3].map(ObjectIdentifier.init))
        set.insert(objects[4])
        #expect(set.objects.map(ObjectIdentifier.init) == objects[1...4].map(ObjectIdentifier.init))
        #expect(second.count == 3)
        set.removeAll()
        #expect(set.objects.isEmpty && set.isEmpty)
        #expect(first.count == 3 && second.count == 3)
    }

    /// `ObjectsDidChange` lists the objects inserted since the last one, whether the inserted
    /// set is listed as it is or changed in between (deletes, saves, a processPendingChanges
    /// with objects already inserted).
    @Test func objectsDidChangeListsTheObjectsInsertedSinceTheLastOne() throws {
        let stack = try TestStack()
        let context = stack.context
        let notes = ChangeRecorder(context)
        let a = stack.insert("Car", ["name": "a"]), b = stack.insert("Car", ["name": "b"])
        context.processPendingChanges()
        #expect(notes.last(NSInsertedObjectsKey) == [a, b])
        let c = stack.insert("Car", ["name": "c"])
        context.processPendingChanges()
        #expect(notes.last(NSInsertedObjectsKey) == [c])
        let d = stack.insert("Car", ["name": "d"]), e = stack.insert("Car", ["name": "e"])
        context.delete(d)
        let f = stack.insert("Car", ["name": "f"])
        context.processPendingChanges()
        #expect(notes.last(NSInsertedObjectsKey) == [d, e, f])
        #expect(notes.last(NSDeletedObjectsKey) == [d])
        try context.save()
        let g = stack.insert("Car", ["name": "g"])
        context.delete(g)
        context.insert(g) // undeleted before the notice
        context.processPendingChanges()
        #expect(notes.last(NSInsertedObjectsKey) == [g])
        #expect(context.insertedObjects == [g])
        try context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT COUNT(*) FROM ZCAR") == [["6"]])
        _ = (a, b, c, e, f)
    }

    /// An object's `deinit` removes its own key only, never another object's slot under it.
    @Test func aDeinitLeavesAnotherObjectsSlot() throws {
        let stack = try TestStack()
        let entity = stack.model.entitiesByName["Car"]!
        let kept = NSManagedObject(entity: entity, insertInto: nil)
        let other = NSManagedObject(entity: entity, insertInto: nil)
        var registry = ObjectRegistry()
        let key = IDKey(store: IDKey.temporaryStore, root: 1, value: 7)
        registry[key] = Unmanaged.passUnretained(kept)
        registry.remove(key, ifObjectAt: Unmanaged.passUnretained(other).toOpaque())
        #expect(registry[key]?.takeUnretainedValue() === kept)
        registry.remove(key, ifObjectAt: Unmanaged.passUnretained(kept).toOpaque())
        #expect(registry[key] == nil)
        #expect(registry.count == 0)
    }
}

/// The IDs of the last `NSInvalidatedAllObjectsKey` a context posted.
private final class InvalidatedRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var _ids: [NSManagedObjectID] = []
    private var token: (any NSObjectProtocol)?
    var ids: [NSManagedObjectID] { lock.withLock { _ids } }

    init(_ context: NSManagedObjectContext) {
        token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { [weak self] note in
            guard let ids = note.userInfo?[NSInvalidatedAllObjectsKey] as? [NSManagedObjectID] else { return }
            self?.lock.withLock { self?._ids = ids }
        }
    }
    deinit { if let token { NotificationCenter.default.removeObserver(token) } }
}

/// The objects under one key of the last `ObjectsDidChange` a context posted that had that key.
private final class ChangeRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var notes: [[AnyHashable: Any]] = []
    private var token: (any NSObjectProtocol)?

    init(_ context: NSManagedObjectContext) {
        token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { [weak self] note in
            let info = note.userInfo ?? [:]
            self?.lock.withLock { self?.notes.append(info) }
        }
    }
    deinit { if let token { NotificationCenter.default.removeObserver(token) } }

    func last(_ key: String) -> Set<NSManagedObject>? {
        lock.withLock { notes.last { $0[key] != nil }?[key] as? Set<NSManagedObject> }
    }
}

/// Takes back, in its `deinit`, another of the objects ``watched`` points to weakly, unless
/// one was taken back already.
final class ReclaimingCar: NSManagedObject {
    struct Weak { weak var object: NSManagedObject?; init(_ object: NSManagedObject) { self.object = object } }
    nonisolated(unsafe) static var watched: [Weak] = []
    nonisolated(unsafe) static var reclaimed: NSManagedObject?
    deinit {
        guard Self.reclaimed == nil else { return }
        for entry in Self.watched {
            if let other = entry.object, other !== self { Self.reclaimed = other; return }
        }
    }
}
