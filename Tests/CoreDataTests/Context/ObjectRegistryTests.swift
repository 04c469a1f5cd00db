import Foundation
import Testing
@testable import CoreData

@Suite("Object registry")
struct ObjectRegistryTests {
    @Test func insertFindRemoveAndGrowAgreeWithADictionary() throws {
        let stack = try TestStack()
        let entity = stack.model.entitiesByName["Car"]!
        var objects: [NSManagedObject] = []
        for _ in 0..<64 { objects.append(NSManagedObject(entity: entity, insertInto: nil)) }
        var registry = ObjectRegistry()
        var reference: [IDKey: ObjectIdentifier] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            let key = IDKey(store: Int.random(in: 0..<3, using: &generator), root: Int.random(in: 1..<4, using: &generator),
                            value: Int64.random(in: 0..<500, using: &generator))
            if step % 3 == 2 {
                registry[key] = nil
                reference[key] = nil
            } else {
                let object = objects[step % objects.count]
                registry[key] = Unmanaged.passUnretained(object)
                reference[key] = ObjectIdentifier(object)
            }
            if step % 1000 == 0 {
                #expect(registry.count == reference.count)
                for (key, id) in reference { #expect(registry[key].map { ObjectIdentifier($0.takeUnretainedValue()) } == id) }
            }
        }
        #expect(registry.count == reference.count)
        #expect(registry.values.count == reference.count)
        registry.removeAll()
        #expect(registry.count == 0)
    }

    /// A steady number of live objects while others come and go (a context faulting objects in
    /// while the app drops old ones) leaves tombstones behind. Found by review: sized for exactly
    /// twice its live keys, the table was rebuilt on almost every insert when the live count sat
    /// near a power of two (8,191 live objects: 5,000 inserts took 10 s instead of 2 ms).
    @Test(arguments: [1_000, 4_095, 4_096, 8_000, 8_191, 8_192])
    func aChurnAroundASteadyCountRebuildsRarely(live: Int) throws {
        let stack = try TestStack()
        let object = NSManagedObject(entity: stack.model.entitiesByName["Car"]!, insertInto: nil)
        let reference = Unmanaged.passUnretained(object)
        var registry = ObjectRegistry()
        for value in 0..<live { registry[IDKey(store: 1, root: 1, value: Int64(value))] = reference }
        let before = registry.rebuilds
        for value in live..<(live + 5_000) {
            registry[IDKey(store: 1, root: 1, value: Int64(value))] = reference
            registry[IDKey(store: 1, root: 1, value: Int64(value - live))] = nil
        }
        #expect(registry.count == live)
        // Each rebuild leaves at least a sixteenth of the table free: a few rebuilds, not thousands.
        #expect(registry.rebuilds - before <= 8)
        for value in (5_000)..<(live + 5_000) { #expect(registry[IDKey(store: 1, root: 1, value: Int64(value))] != nil) }
    }

    /// The same through the public API: objects faulted in by ID while only the last 8,191 are
    /// kept. (Counted, not timed: the registry's rebuilds.)
    @Test func faultingWithASteadyWindowOfObjectsRebuildsRarely() throws {
        let stack = try TestStack()
        for i in 0..<14_000 {
            NSEntityDescription.insertNewObject(forEntityName: "Car", into: stack.context).setValue("car \(i)", forKey: "name")
        }
        try stack.context.save()
        let ids = try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car")).map(\.objectID)
        let context = stack.newContext()
        let live = 8_191
        let before = context.registryRebuilds
        context.performAndWait {
            var window = [NSManagedObject?](repeating: nil, count: live)
            for (n, id) in ids.enumerated() { window[n % live] = context.object(with: id) }
        }
        #expect(context.registryRebuilds - before <= 12)
    }
}

