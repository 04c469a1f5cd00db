import Foundation
import Testing
@testable import CoreData

/// Rows in an entity's table whose `Z_ENT` is no entity of the model (another version of the
/// model wrote them, and declared its entity in `Z_PRIMARYKEY`) are neither fetched nor
/// counted: every kind of request agrees on the rows it sees.
@Suite("Rows of entities the model does not have")
struct UnknownEntityRowTests {
    /// `Item` (name, rank) with the sub-entity `SpecialItem` (extra).
    private static func model() -> NSManagedObjectModel {
        let item = NSEntityDescription()
        item.name = "Item"
        item.properties = [attribute("name", .stringAttributeType), attribute("rank", .integer64AttributeType)]
        let special = NSEntityDescription()
        special.name = "SpecialItem"
        special.properties = [attribute("extra", .stringAttributeType)]
        item.subentities = [special]
        let model = NSManagedObjectModel()
        model.entities = [item, special]
        return model
    }

    /// A store holding three rows of `Gadget`, a sub-entity of `Item` that the model lacks (the
    /// lowest keys, so they come first in key order), then four items and two special items.
    /// Returns the stack and the first one, which owns the store's folder.
    private func stackWithForeignRows() throws -> (stack: TestStack, folderOwner: TestStack) {
        let first = try TestStack(model: Self.model())
        let itemNumber = try #require(try first.rows("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Item'").first?.first)
        try first.coordinator.remove(first.coordinator.persistentStores[0])
        try RawSQLite.execute(first.url.path, """
            INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (9, 'Gadget', \(itemNumber), 0);
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZRANK) VALUES (1, 9, 1, 'gadget 1', 1), (2, 9, 1, 'gadget 2', 2), (3, 9, 1, 'gadget 3', 3);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_ENT = \(itemNumber);
            """)
        let stack = try first.reopen()
        for index in 0..<4 { stack.insert("Item", ["name": "item \(index)", "rank": index]) }
        for index in 0..<2 { stack.insert("SpecialItem", ["name": "special \(index)", "rank": 10 + index]) }
        try stack.context.save()
        return (stack, first)
    }

    @Test(arguments: [true, false])
    func fetchesCountsAndDictionariesAgree(includesSubentities: Bool) throws {
        let (stack, folderOwner) = try stackWithForeignRows()
        defer { withExtendedLifetime(folderOwner) {} }
        let context = stack.newContext()
        let expected = includesSubentities ? 6 : 4
        func request<T: NSFetchRequestResult>(_ type: T.Type, _ configure: (NSFetchRequest<T>) -> Void = { _ in }) -> NSFetchRequest<T> {
            let request = NSFetchRequest<T>(entityName: "Item")
            request.includesSubentities = includesSubentities
            configure(request)
            return request
        }
        let objects = try context.fetch(request(NSManagedObject.self))
        #expect(objects.count == expected)
        #expect(!objects.contains { ($0.value(forKey: "name") as? String)?.hasPrefix("gadget") == true })
        #expect(try context.count(for: request(NSManagedObject.self)) == expected)
        #expect(try context.count(for: request(NSManagedObject.self) { $0.predicate = NSPredicate(format: "rank >= 0") }) == expected)
        #expect(try context.fetch(request(NSManagedObject.self) { $0.fetchBatchSize = 2 }).count == expected)
        #expect(try context.fetch(request(NSNumber.self) { $0.resultType = .countResultType }) == [NSNumber(value: expected)])
        #expect(try context.fetch(request(NSManagedObjectID.self) { $0.resultType = .managedObjectIDResultType }).count == expected)
        let names = try context.fetch(request(NSDictionary.self) {
            $0.resultType = .dictionaryResultType
            $0.propertiesToFetch = ["name"]
        }).compactMap { $0["name"] as? String }
        #expect(names.count == expected)
        #expect(!names.contains { $0.hasPrefix("gadget") })
        let total = NSExpressionDescription()
        total.name = "total"
        total.expression = NSExpression(forFunction: "count:", arguments: [NSExpression(forKeyPath: "name")])
        total.expressionResultType = .integer64AttributeType
        let counted = try context.fetch(request(NSDictionary.self) {
            $0.resultType = .dictionaryResultType
            $0.propertiesToFetch = [total]
        })
        #expect((counted.first?["total"] as? NSNumber)?.intValue == expected)

        // A limit and an offset count the model's rows only (the gadgets have the lowest keys).
        #expect(try context.fetch(request(NSManagedObject.self) { $0.fetchLimit = 3 }).count == 3)
        #expect(try context.fetch(request(NSManagedObject.self) { $0.fetchLimit = 2; $0.fetchOffset = 1 })
            .compactMap { $0.value(forKey: "name") as? String } == ["item 1", "item 2"])
        #expect(try context.count(for: request(NSManagedObject.self) { $0.fetchLimit = 100 }) == expected)
    }
}
