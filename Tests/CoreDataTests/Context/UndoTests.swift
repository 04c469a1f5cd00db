import Foundation
import Testing
@testable import CoreData

/// What a test compares of a context: each object's membership and values, and the change sets.
private struct ContextState: Equatable, CustomStringConvertible {
    var objects: [String] = []
    var inserted: Set<ObjectIdentifier> = []
    var updated: Set<ObjectIdentifier> = []
    var deleted: Set<ObjectIdentifier> = []
    var hasChanges = false

    /// The state of `objects` (every object a test made or fetched, in a fixed order) in `context`.
    init(_ context: NSManagedObjectContext, _ objects: [NSManagedObject]) {
        func name(_ object: NSManagedObject?) -> String {
            guard let object else { return "nil" }
            return objects.firstIndex { $0 === object }.map { "#\($0)" } ?? "?"
        }
        for object in objects {
            // A deleted object is gone (whether its deletion was saved or not).
            guard object.managedObjectContext === context, !object.isDeleted else { self.objects.append("gone"); continue }
            var line = ""
            for property in object.entity.properties.sorted(by: { $0.name < $1.name }) where !(property is NSFetchedPropertyDescription) {
                let value = object.value(forKey: property.name)
                let text: String
                switch value {
                case let object as NSManagedObject: text = name(object)
                case let set as Set<NSManagedObject>: text = set.map(name).sorted().joined(separator: ",")
                case let ordered as NSOrderedSet: text = ordered.array.map { name($0 as? NSManagedObject) }.joined(separator: ",")
                case nil: text = "nil"
                default: text = "\(value!)"
                }
                line += "\(property.name)=\(text) "
            }
            self.objects.append(line)
        }
        inserted = Set(context.insertedObjects.map(ObjectIdentifier.init))
        updated = Set(context.updatedObjects.map(ObjectIdentifier.init))
        deleted = Set(context.deletedObjects.map(ObjectIdentifier.init))
        hasChanges = context.hasChanges
    }

    /// The objects whose state differs from `expected`'s, for a failure's message.
    func differences(from expected: ContextState) -> String {
        zip(objects, expected.objects).enumerated().filter { $0.element.0 != $0.element.1 }
            .map { "#\($0.offset): \($0.element.0) (expected \($0.element.1))" }.joined(separator: "\n")
    }

    var description: String {
        objects.enumerated().map { "#\($0.offset): \($0.element)" }.joined(separator: "\n")
            + "\ninserted \(inserted.count) updated \(updated.count) deleted \(deleted.count) hasChanges \(hasChanges)"
    }
}

@Suite("Undo and redo of a context's changes")
struct UndoTests {
    /// A stack whose context has an undo manager, with a saved person owning a car, and a tag.
    private func savedStack() throws -> (TestStack, NSManagedObject, NSManagedObject, NSManagedObject) {
        let stack = try TestStack()
        let ada = stack.insert("Person", ["name": "Ada", "age": 36])
        let car = stack.insert("Car", ["name": "Model T", "owner": ada])
        let tag = stack.insert("Tag", ["label": "classic"])
        try stack.context.save()
        stack.context.undoManager = UndoManager()
        return (stack, ada, car, tag)
    }

    @Test("Undo after a merge took a newer row puts the old value back as a change to save")
    func undoAfterAMergeIsAChangeToSave() throws {
        let (stack, _, car, _) = try savedStack()
        car.setValue("a", forKey: "name")
        stack.context.processPendingChanges()
        // Another context renames the car and saves; the merge keeps the unsaved "a".
        let other = stack.newContext()
        try other.existingObject(with: car.objectID).setValue("Z", forKey: "name")
        nonisolated(unsafe) var saved: Notification?
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: other, queue: nil) { saved = $0 }
        try other.save()
        NotificationCenter.default.removeObserver(observer)
        stack.context.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(car.value(forKey: "name") as? String == "a")
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "Model T")
        #expect(car.isUpdated && stack.context.hasChanges && car.changedValues()["name"] as? String == "Model T")
        try stack.context.save()
        #expect(try stack.reopen().fetch("Car").first?.value(forKey: "name") as? String == "Model T")
    }

    @Test func noUndoManagerByDefaultAndUndoDoesNothingWithoutOne() throws {
        let stack = try TestStack()
        #expect(stack.context.undoManager == nil)
        let car = stack.insert("Car", ["name": "a"])
        stack.context.undo()
        #expect(car.isInserted)
    }

    @Test func anAttributeChangeIsUndoneAndRedone() throws {
        let (stack, _, car, _) = try savedStack()
        car.setValue("Model A", forKey: "name")
        car.setValue(1927, forKey: "year")
        #expect(stack.context.hasChanges)
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "Model T")
        #expect(car.value(forKey: "year") as? Int == 2000)
        #expect(!stack.context.hasChanges && !car.isUpdated)
        stack.context.redo()
        #expect(car.value(forKey: "name") as? String == "Model A")
        #expect(car.value(forKey: "year") as? Int == 1927)
        #expect(stack.context.updatedObjects == [car])
    }

    @Test func anInsertIsUndoneAndRedone() throws {
        let (stack, ada, _, _) = try savedStack()
        let car = stack.insert("Car", ["name": "Model A", "owner": ada])
        stack.context.undo()
        #expect(stack.context.insertedObjects.isEmpty)
        #expect(car.managedObjectContext == nil)
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 1)
        #expect(!stack.context.hasChanges)
        stack.context.redo()
        #expect(stack.context.insertedObjects == [car])
        #expect(car.value(forKey: "name") as? String == "Model A")
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.contains(car) == true)
        try stack.context.save()
        #expect(try stack.reopen().fetch("Car").count == 2)
    }

    @Test func aDeleteIsUndoneWithItsRelationshipsAndCascade() throws {
        let (stack, ada, car, tag) = try savedStack()
        car.setValue(Set([tag]), forKey: "tags")
        stack.context.processPendingChanges()
        stack.context.delete(ada) // cascades to the car, whose tag loses it (nullify)
        stack.context.processPendingChanges()
        #expect(car.isDeleted)
        #expect((tag.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
        stack.context.undo()
        #expect(!ada.isDeleted && !car.isDeleted)
        #expect(stack.context.deletedObjects.isEmpty)
        #expect(car.value(forKey: "owner") as? NSManagedObject === ada)
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>) == [car])
        #expect((tag.value(forKey: "cars") as? Set<NSManagedObject>) == [car])
        stack.context.redo()
        #expect(stack.context.deletedObjects == [ada, car])
        stack.context.undo()
        stack.context.undo() // the tag too
        #expect(!stack.context.hasChanges)
    }

    @Test func toOneAndToManyChangesAreUndoneOnBothSides() throws {
        let (stack, ada, car, _) = try savedStack()
        let bob = stack.insert("Person", ["name": "Bob"])
        stack.context.processPendingChanges()
        car.setValue(bob, forKey: "owner")
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
        stack.context.undo()
        #expect(car.value(forKey: "owner") as? NSManagedObject === ada)
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>) == [car])
        #expect((bob.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
        #expect(stack.context.updatedObjects.isEmpty)
        ada.mutableSetValue(forKey: "cars").remove(car)
        #expect(car.value(forKey: "owner") == nil)
        stack.context.undo()
        #expect(car.value(forKey: "owner") as? NSManagedObject === ada)
        stack.context.redo()
        #expect(car.value(forKey: "owner") == nil)
        #expect((ada.value(forKey: "cars") as? Set<NSManagedObject>)?.isEmpty == true)
    }

    @Test func anOrderedRelationshipGetsItsOrderBack() throws {
        let stack = try TestStack()
        let playlist = stack.insert("Playlist", ["title": "p"])
        let songs = (0..<3).map { stack.insert("Song", ["title": "s\($0)"]) }
        playlist.setValue(NSOrderedSet(array: songs), forKey: "songs")
        try stack.context.save()
        stack.context.undoManager = UndoManager()
        playlist.setValue(NSOrderedSet(array: songs.reversed()), forKey: "songs")
        stack.context.undo()
        #expect((playlist.value(forKey: "songs") as? NSOrderedSet)?.array as? [NSManagedObject] == songs)
        stack.context.redo()
        #expect((playlist.value(forKey: "songs") as? NSOrderedSet)?.array as? [NSManagedObject] == songs.reversed())
    }

    @Test func eachEventIsOneStepAndAnExplicitGroupSpansEvents() throws {
        let (stack, _, car, _) = try savedStack()
        let undoManager = try #require(stack.context.undoManager)
        car.setValue("a", forKey: "name")
        stack.context.processPendingChanges()
        car.setValue("b", forKey: "name")
        stack.context.processPendingChanges()
        undoManager.beginUndoGrouping()
        car.setValue("c", forKey: "name")
        stack.context.processPendingChanges()
        car.setValue("d", forKey: "name")
        undoManager.endUndoGrouping()
        undoManager.setActionName("Rename Twice")
        #expect(undoManager.undoActionName == "Rename Twice")
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "b")
        #expect(undoManager.redoActionName == "Rename Twice")
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "a")
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "Model T")
        #expect(!undoManager.canUndo)
    }

    @Test func pendingChangesBeforeAGroupAreAStepOfTheirOwn() throws {
        let (stack, _, car, _) = try savedStack()
        let undoManager = try #require(stack.context.undoManager)
        car.setValue("a", forKey: "name") // not processed yet
        undoManager.beginUndoGrouping()   // its checkpoint records "a" first
        car.setValue("b", forKey: "name")
        undoManager.endUndoGrouping()
        undoManager.undo()
        #expect(car.value(forKey: "name") as? String == "a")
        undoManager.undo()
        #expect(car.value(forKey: "name") as? String == "Model T")
    }

    @Test func undoOnTheUndoManagerRecordsPendingChangesFirst() throws {
        let (stack, _, car, _) = try savedStack()
        car.setValue("a", forKey: "name")
        stack.context.undoManager!.undo()
        #expect(car.value(forKey: "name") as? String == "Model T")
    }

    @Test func levelsOfUndoLimitTheSteps() throws {
        let (stack, _, car, _) = try savedStack()
        stack.context.undoManager!.levelsOfUndo = 2
        for name in ["a", "b", "c"] {
            car.setValue(name, forKey: "name")
            stack.context.processPendingChanges()
        }
        stack.context.undo()
        stack.context.undo()
        stack.context.undo() // nothing left
        #expect(car.value(forKey: "name") as? String == "a")
    }

    @Test func rollbackAndResetRemoveTheContextsOperations() throws {
        let (stack, _, car, _) = try savedStack()
        let undoManager = try #require(stack.context.undoManager)
        car.setValue("a", forKey: "name")
        stack.context.processPendingChanges()
        stack.context.rollback()
        #expect(!undoManager.canUndo)
        #expect(car.value(forKey: "name") as? String == "Model T")
        car.setValue("b", forKey: "name")
        stack.context.processPendingChanges()
        stack.context.reset()
        #expect(!undoManager.canUndo)
    }

    @Test func disabledRegistrationMakesChangesThatAreNotUndone() throws {
        let (stack, _, car, _) = try savedStack()
        let undoManager = try #require(stack.context.undoManager)
        car.setValue("a", forKey: "name")
        stack.context.processPendingChanges()
        undoManager.disableUndoRegistration()
        car.setValue(1999, forKey: "year")
        stack.context.processPendingChanges()
        undoManager.enableUndoRegistration()
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "Model T")
        #expect(car.value(forKey: "year") as? Int == 1999)
        #expect(car.isUpdated)
    }

    @Test func saveKeepsTheUndoStackAndAnUndoneStateIsSavedAgain() throws {
        let (stack, ada, car, _) = try savedStack()
        car.setValue("Model A", forKey: "name")
        let bike = stack.insert("Car", ["name": "Velo", "owner": ada])
        try stack.context.save()
        #expect(stack.context.undoManager!.canUndo)
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "Model T")
        #expect(bike.isDeleted)
        #expect(stack.context.hasChanges)
        try stack.context.save()
        var other = try stack.reopen()
        #expect(try other.fetch("Car").map { $0.value(forKey: "name") as? String } == ["Model T"])
        stack.context.redo()
        #expect(car.value(forKey: "name") as? String == "Model A")
        #expect(bike.isInserted)
        try stack.context.save()
        other = try stack.reopen()
        #expect(Set(try other.fetch("Car").map { $0.value(forKey: "name") as? String }) == ["Model A", "Velo"])
        let people = try other.fetch("Person")
        #expect((people.first?.value(forKey: "cars") as? Set<NSManagedObject>)?.count == 2)
    }

    @Test func undoAndRedoPostObjectsDidChange() throws {
        let (stack, _, car, _) = try savedStack()
        car.setValue("Model A", forKey: "name")
        let person = stack.insert("Person", ["name": "Bob"])
        stack.context.processPendingChanges()
        let observed = ObservedChanges(stack.context)
        stack.context.undo()
        #expect(observed.updated == [car])
        #expect(observed.deleted == [person])
        stack.context.redo()
        #expect(observed.updated == [car])
        #expect(observed.inserted == [person])
    }

    /// Undoing the delete of a saved object brings it back: reported inserted, as rollback does;
    /// redo deletes it again.
    @Test func undoingADeleteReportsTheObjectInserted() throws {
        let (stack, _, _, tag) = try savedStack()
        stack.context.delete(tag)
        stack.context.processPendingChanges()
        let observed = ObservedChanges(stack.context)
        stack.context.undo()
        #expect(observed.inserted == [tag] && observed.updated.isEmpty && observed.deleted.isEmpty)
        #expect(!tag.isDeleted && !stack.context.hasChanges)
        stack.context.redo()
        #expect(observed.deleted == [tag] && observed.inserted.isEmpty)
    }

    /// A delete withdrawn (the object inserted again) before it was processed is reported by no
    /// `ObjectsDidChange`.
    @Test func aDeleteWithdrawnBeforeItWasProcessedIsNotReported() throws {
        let (stack, _, _, tag) = try savedStack()
        stack.context.undoManager = nil
        let observed = ObservedChanges(stack.context)
        stack.context.delete(tag)
        stack.context.insert(tag)
        stack.context.processPendingChanges()
        #expect(observed.deleted.isEmpty && observed.inserted.isEmpty)
        #expect(!tag.isDeleted && !stack.context.hasChanges)
        // Reported deleted, then taken back: reported inserted.
        stack.context.delete(tag)
        stack.context.processPendingChanges()
        #expect(observed.deleted == [tag])
        stack.context.insert(tag)
        stack.context.processPendingChanges()
        #expect(observed.inserted == [tag] && observed.deleted.isEmpty)
    }

    /// `canRedo` posts a checkpoint first, as Apple's does: a change since the undo, not yet
    /// processed, leaves nothing to redo.
    @Test func canRedoSeesAChangeNotYetProcessed() throws {
        let (stack, _, car, _) = try savedStack()
        car.setValue("Model A", forKey: "name")
        stack.context.processPendingChanges()
        stack.context.undo()
        #expect(stack.context.undoManager!.canRedo)
        car.setValue("Model B", forKey: "name")
        #expect(!stack.context.undoManager!.canRedo)
        stack.context.redo()
        #expect(car.value(forKey: "name") as? String == "Model B")
    }

    /// A save's passes over the pending changes are one undo step: what `willSave()` changed is
    /// undone with the changes saved, as one run loop event groups them on Apple platforms. A
    /// fetch between changes leaves the step open.
    @Test func aSaveAndAFetchDoNotSplitTheUndoStep() throws {
        let stack = try TestStack(classes: ["Car": PricedOnSave.self])
        let car = stack.insert("Car", ["name": "Model T"])
        try stack.context.save()
        stack.context.undoManager = UndoManager()
        #expect(car.value(forKey: "price") as? Double == 7)
        car.setValue("Velo", forKey: "name")
        try stack.context.save()
        #expect(car.value(forKey: "price") as? Double == 4)
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "Model T")
        #expect(car.value(forKey: "price") as? Double == 7)
        car.setValue(1999, forKey: "year")
        _ = try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        car.setValue("Velo", forKey: "name")
        stack.context.processPendingChanges()
        stack.context.undo()
        #expect(car.value(forKey: "year") as? Int == 2000)
        #expect(car.value(forKey: "name") as? String == "Model T")
    }

    @Test func aChildContextUndoesAndSavesToItsParent() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "Model T"])
        try stack.context.save()
        let (parent, child) = stack.parentAndChild()
        try child.performAndWait {
            child.undoManager = UndoManager()
            let car = try #require(try child.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).first)
            car.setValue("Model A", forKey: "name")
            let extra = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
            extra.setValue("Velo", forKey: "name")
            child.processPendingChanges()
            extra.setValue("Bike", forKey: "name")
            child.undo()
            #expect(extra.value(forKey: "name") as? String == "Velo")
            child.undo()
            #expect(car.value(forKey: "name") as? String == "Model T")
            #expect(!child.hasChanges)
            child.redo()
            try child.save()
        }
        try parent.performAndWait {
            let names = try parent.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).map { $0.value(forKey: "name") as? String }
            #expect(Set(names) == ["Model A", "Velo"])
        }
    }

    @Test func whatARefreshDiscardedIsNotPutBack() throws {
        let (stack, _, car, _) = try savedStack()
        car.setValue("Model A", forKey: "name")
        stack.context.processPendingChanges()
        stack.context.refresh(car, mergeChanges: false) // "Model A" is gone, and not undoable
        car.setValue(1999, forKey: "year")
        stack.context.undo()
        #expect(car.value(forKey: "year") as? Int == 2000)
        #expect(car.value(forKey: "name") as? String == "Model T")
    }

    @Test func changesBeyondSixtyFourPropertiesAreUndone() throws {
        let stack = try TestStack(model: WideEntityTests.model())
        let object = stack.insert("Wide", ["a1": 1, "a69": 69])
        try stack.context.save()
        stack.context.undoManager = UndoManager()
        object.setValue(70, forKey: "a69")
        object.setValue(66, forKey: "a66")
        stack.context.undo()
        #expect(object.value(forKey: "a69") as? Int == 69)
        #expect(object.value(forKey: "a66") == nil)
        #expect(!object.hasChanges && object.changedValues().isEmpty)
        stack.context.redo()
        #expect(Set(object.changedValues().keys) == ["a66", "a69"])
    }

    @Test func withoutAnUndoManagerNothingMoreIsRecorded() throws {
        let (stack, _, car, _) = try savedStack()
        let undoManager = try #require(stack.context.undoManager)
        stack.context.undoManager = nil
        car.setValue("Model A", forKey: "name")
        stack.context.processPendingChanges()
        #expect(!undoManager.canUndo)
        undoManager.undo()
        #expect(car.value(forKey: "name") as? String == "Model A")
    }

    @Test func changesMadeBeforeTheUndoManagerWasSetAreNotUndone() throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "a"])
        stack.context.undoManager = UndoManager()
        car.setValue("b", forKey: "name")
        stack.context.undo()
        #expect(car.value(forKey: "name") as? String == "a")
        #expect(car.isInserted)
        stack.context.undo()
        #expect(car.isInserted)
    }

    /// Thousands of random edits in random groups; undoing them all gives the starting state
    /// back, and redoing them all the final one.
    @Test func randomEditsUndoneAndRedoneAll() throws {
        let stack = try TestStack()
        var generator = SeededGenerator(seed: 24)
        var objects: [NSManagedObject] = []
        for index in 0..<8 { objects.append(stack.insert("Person", ["name": "p\(index)"])) }
        for index in 0..<12 { objects.append(stack.insert("Car", ["name": "c\(index)", "owner": objects[index % 8]])) }
        for index in 0..<4 { objects.append(stack.insert("Tag", ["label": "t\(index)"])) }
        try stack.context.save()
        let context = stack.context
        let undoManager = UndoManager()
        context.undoManager = undoManager
        var start = ContextState(context, objects)
        var steps = 0
        for _ in 0..<600 {
            let explicit = Bool.random(using: &generator)
            if explicit { undoManager.beginUndoGrouping() }
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                randomEdit(context, &objects, &generator)
                if Int.random(in: 0..<4, using: &generator) == 0 { context.processPendingChanges() }
            }
            if explicit { undoManager.endUndoGrouping() } else { context.processPendingChanges() }
            steps += 1
            if steps % 100 == 0 { try context.save() }
        }
        context.processPendingChanges()
        let end = ContextState(context, objects)
        while undoManager.canUndo { context.undo() }
        let undone = ContextState(context, objects)
        start.objects += Array(repeating: "gone", count: objects.count - start.objects.count) // the objects made since
        #expect(undone.objects == start.objects, "\(undone.differences(from: start))")
        try context.save() // the undone state saves; redo then starts from saved objects
        while undoManager.canRedo { context.redo() }
        let redone = ContextState(context, objects)
        #expect(redone.objects == end.objects, "\(redone.differences(from: end))")
        try context.save()
    }

    /// One random change: an attribute, a relationship (to-one or to-many), an insert or a delete.
    private func randomEdit(_ context: NSManagedObjectContext, _ objects: inout [NSManagedObject], _ generator: inout SeededGenerator) {
        let live = objects.filter { $0.managedObjectContext === context && !$0.isDeleted }
        let people = live.filter { $0.entity.name == "Person" }
        let cars = live.filter { $0.entity.name == "Car" }
        let tags = live.filter { $0.entity.name == "Tag" }
        switch Int.random(in: 0..<10, using: &generator) {
        case 0...2:
            guard let car = cars.randomElement(using: &generator) else { return }
            car.setValue("c\(Int.random(in: 0..<1000, using: &generator))", forKey: "name")
            car.setValue(Int.random(in: 1900...2050, using: &generator), forKey: "year")
        case 3:
            guard let person = people.randomElement(using: &generator) else { return }
            person.setValue(Int.random(in: 0..<99, using: &generator), forKey: "age")
        case 4:
            guard let car = cars.randomElement(using: &generator) else { return }
            car.setValue(Bool.random(using: &generator) ? people.randomElement(using: &generator) : nil, forKey: "owner")
        case 5:
            guard let car = cars.randomElement(using: &generator), let tag = tags.randomElement(using: &generator) else { return }
            let set = car.mutableSetValue(forKey: "tags")
            if set.contains(tag) { set.remove(tag) } else { set.add(tag) }
        case 6:
            let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
            car.setValue("n\(objects.count)", forKey: "name")
            car.setValue(people.randomElement(using: &generator), forKey: "owner")
            objects.append(car)
        case 7:
            let person = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            person.setValue("n\(objects.count)", forKey: "name")
            objects.append(person)
        case 8:
            guard let car = cars.randomElement(using: &generator) else { return }
            context.delete(car)
        default:
            guard people.count > 2, let person = people.randomElement(using: &generator) else { return }
            context.delete(person) // cascades to its cars
        }
    }
}

/// The objects of the last `ObjectsDidChange` a context posted.
private final class ObservedChanges: @unchecked Sendable {
    private(set) var inserted: Set<NSManagedObject> = []
    private(set) var updated: Set<NSManagedObject> = []
    private(set) var deleted: Set<NSManagedObject> = []
    private var observer: (any NSObjectProtocol)?

    init(_ context: NSManagedObjectContext) {
        observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil) { [unowned self] note in
            let info = note.userInfo ?? [:]
            inserted = info[NSInsertedObjectsKey] as? Set<NSManagedObject> ?? []
            updated = info[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? []
            deleted = info[NSDeletedObjectsKey] as? Set<NSManagedObject> ?? []
        }
    }

    deinit { if let observer { NotificationCenter.default.removeObserver(observer) } }
}

/// A car whose `willSave()` sets its price to the length of its name (a denormalised value).
final class PricedOnSave: NSManagedObject {
    override func willSave() {
        super.willSave()
        let price = Double((value(forKey: "name") as? String ?? "").count)
        if !isDeleted && value(forKey: "price") as? Double != price { setValue(price, forKey: "price") }
    }
}

/// Undo and redo of an object whose image was taken while it was a fault without data: a refresh
/// after a save, a delete by ID, an edit thrown away by a refresh. The image held no values,
/// and restoring it read past them (the process stopped).
@Suite("Undo of objects that were faults")
struct UndoOfFaultsTests {
    static func stack() throws -> (TestStack, NSManagedObjectID) {
        let stack = try TestStack()
        stack.context.undoManager = UndoManager()
        let car = stack.insert("Car", ["name": "A"])
        try stack.context.save()
        stack.context.undoManager!.removeAllActions()
        return (stack, car.objectID)
    }

    @Test func redoAfterARefreshOfAllObjects() throws {
        let (stack, id) = try Self.stack()
        let car = try stack.context.existingObject(with: id)
        car.setValue("B", forKey: "name")
        try stack.context.save()
        stack.context.refreshAllObjects()
        stack.context.undoManager!.undo()
        #expect(car.value(forKey: "name") as? String == "A")
        stack.context.undoManager!.redo()
        #expect(car.value(forKey: "name") as? String == "B")
    }

    @Test func undoOfADeleteByIDWithoutPropagation() throws {
        let (stack, id) = try Self.stack()
        stack.context.propagatesDeletesAtEndOfEvent = false
        let car = stack.context.object(with: id) // a fault
        stack.context.delete(car)
        stack.context.processPendingChanges()
        stack.context.undoManager!.undo()
        #expect(!car.isDeleted && car.value(forKey: "name") as? String == "A")
    }

    @Test func undoOfAnEditARefreshThrewAway() throws {
        let (stack, id) = try Self.stack()
        let car = try stack.context.existingObject(with: id)
        car.setValue("X", forKey: "name")
        stack.context.refresh(car, mergeChanges: false)
        stack.context.undoManager!.undo()
        #expect(car.value(forKey: "name") as? String == "A")
    }
}
