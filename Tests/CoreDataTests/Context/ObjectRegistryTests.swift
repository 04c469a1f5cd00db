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
}
