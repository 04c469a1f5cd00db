import Foundation
import Testing
@testable import CoreData

@Suite("Review: store behaviour")
struct ReviewStoreTests {
    /// The per-entity INSERT statement is cached outside `SQLiteConnection.cached`, so a failed
    /// step leaves it un-reset: the next save's binds fail with SQLITE_MISUSE and the stale row is written.
    @Test func failedInsertThenSaveWritesTheRightValues() throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model)
        let original = stack.insert("Tag", ["label": "a"]); try stack.context.save()
        let dup = stack.insert("Tag", ["label": "a"])
        #expect(throws: (any Error).self) { try stack.context.save() }
        stack.context.delete(dup)
        stack.context.delete(original)
        let z = stack.insert("Tag", ["label": "z"])
        try stack.context.save()
        #expect(try RawSQLite.query(stack.url.path, "SELECT ZLABEL FROM ZTAG").map { $0[0] } == ["z"])
        #expect(z.value(forKey: "label") as? String == "z")
    }

    @Test(arguments: [false, true]) func uniquenessAcrossInsertsOfOneSave(inMemory: Bool) throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model, inMemory: inMemory)
        stack.insert("Tag", ["label": "a"]); stack.insert("Tag", ["label": "a"])
        #expect(throws: (any Error).self) { try stack.context.save() }
    }

    @Test(arguments: [false, true]) func uniquenessOnUpdate(inMemory: Bool) throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model, inMemory: inMemory)
        stack.insert("Tag", ["label": "a"]); let b = stack.insert("Tag", ["label": "b"])
        try stack.context.save()
        b.setValue("a", forKey: "label")
        #expect(throws: (any Error).self) { try stack.context.save() }
    }

    @Test(arguments: [false, true]) func deleteAndReinsertSameUniqueValueInOneSave(inMemory: Bool) throws {
        let model = TestModel.make()
        model.entitiesByName["Tag"]!.uniquenessConstraints = [["label"]]
        let stack = try TestStack(model: model, inMemory: inMemory)
        let a = stack.insert("Tag", ["label": "a"]); try stack.context.save()
        stack.context.delete(a)
        stack.insert("Tag", ["label": "a"])
        try stack.context.save()
    }

    @Test func fetchAfterRemovingTheOnlyStoreThrows() throws {
        let stack = try TestStack()
        stack.insert("Car", ["name": "a"]); try stack.context.save()
        try stack.coordinator.remove(stack.coordinator.persistentStores[0])
        let context = stack.newContext()
        #expect(throws: (any Error).self) { try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")) }
    }

    @Test func objectsLeakThroughRelationshipCycles() throws {
        weak var weakCar: NSManagedObject?
        weak var weakPerson: NSManagedObject?
        do {
            let stack = try TestStack()
            let ada = stack.insert("Person", ["name": "Ada"]); let car = stack.insert("Car", ["name": "a"])
            car.setValue(ada, forKey: "owner")
            try stack.context.save()
            stack.context.reset()
            weakCar = car; weakPerson = ada
        }
        #expect(weakCar == nil && weakPerson == nil, "context and stack are gone, objects should be too")
    }
}
