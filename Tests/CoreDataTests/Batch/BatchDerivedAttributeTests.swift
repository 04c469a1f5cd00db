import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Derived attributes under batch requests, which write rows with no objects: the store keeps
/// them right in the request's transaction, as the triggers of Apple's SQLite store do, on the
/// Blog model (`DerivedAttributeTests` lists its derived attributes). Each scenario runs on a
/// SQLite file, in memory and, with a server, on PostgreSQL; they must agree with what a save
/// computes.
@Suite("Derived attributes under batch requests")
struct BatchDerivedAttributeTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, inMemory, postgreSQL
        var testDescription: String { rawValue }
        static var available: [Kind] { PostgreSQLTestDatabase.server == nil ? [.sqlite, .inMemory] : allCases }
    }

    static func stack(_ kind: Kind) throws -> TestStack {
        let model = try DerivedAttributeTests.blog()
        switch kind {
        case .sqlite: return try TestStack(model: model)
        case .inMemory: return try TestStack(model: model, inMemory: true)
        case .postgreSQL: return try TestStack(model: model, database: PostgreSQLTestDatabase())
        }
    }

    /// `key` of every object of `entity`, fetched afresh, sorted by `sortKey`.
    static func values(_ stack: TestStack, _ entity: String, _ key: String, by sortKey: String) throws -> [Any?] {
        try DerivedAttributeTests.fetch(stack, entity, sortKey, in: stack.newContext()).map { $0.value(forKey: key) }
    }

    static func ints(_ stack: TestStack, _ entity: String, _ key: String, by sortKey: String) throws -> [Int64?] {
        try values(stack, entity, key, by: sortKey).map { ($0 as? NSNumber)?.int64Value }
    }

    /// Ada with posts "a1" (10 words) and "a2" (20), Grace with "g1" (300); tag "t" on a1 and g1.
    @discardableResult
    static func blog(_ stack: TestStack) throws -> Date {
        let ada = stack.insert("Author", ["name": "Ada"])
        let grace = stack.insert("Author", ["name": "Grace"])
        let a1 = stack.insert("Post", ["title": "a1", "words": 10, "author": ada])
        stack.insert("Post", ["title": "a2", "words": 20, "author": ada])
        let g1 = stack.insert("Post", ["title": "g1", "words": 300, "author": grace])
        let tag = stack.insert("Tag", ["label": "t"])
        tag.setValue(NSSet(array: [a1, g1]), forKey: "posts")
        try stack.context.save()
        return try #require(a1.value(forKey: "modified") as? Date)
    }

    @Test(arguments: Kind.available)
    func aBatchUpdateRecomputesWhatReadsTheChangedValues(kind: Kind) throws {
        let stack = try Self.stack(kind)
        let saved = try Self.blog(stack)
        #expect(try Self.ints(stack, "Author", "totalWords", by: "name") == [30, 300])

        // Words of Ada's posts: her sum; the posts' titles: their upper-case copies; and the
        // updated posts' now() stamps, not the other posts'.
        let posts = NSBatchUpdateRequest(entityName: "Post")
        posts.predicate = NSPredicate(format: "author.name == %@", "Ada")
        posts.propertiesToUpdate = ["words": NSExpression(format: "words + 1"), "title": NSExpression(format: "lowercase:(title)")]
        _ = try stack.context.execute(posts)
        #expect(try Self.ints(stack, "Author", "totalWords", by: "name") == [32, 300])
        #expect(try Self.values(stack, "Post", "titleUppercase", by: "title") as? [String] == ["A1", "A2", "G1"])
        let stamps = try Self.values(stack, "Post", "modified", by: "title").map { try #require($0 as? Date) }
        #expect(stamps[0] > saved && stamps[1] == stamps[0])
        #expect(stamps[2] <= saved.addingTimeInterval(1) && stamps[2] < stamps[0])

        // A renamed author: her canonical search name, and the copies of her name in her posts
        // (a value through a to-one relationship).
        let authors = NSBatchUpdateRequest(entityName: "Author")
        authors.predicate = NSPredicate(format: "name == %@", "Grace")
        authors.propertiesToUpdate = ["name": "Grâce Hopper"]
        _ = try stack.context.execute(authors)
        #expect(try Self.values(stack, "Author", "searchName", by: "name") as? [String] == ["ada", "grace hopper"])
        #expect(try Self.values(stack, "Post", "authorName", by: "title") as? [String] == ["Ada", "Ada", "Grâce Hopper"])

        // What a later save computes agrees with what the store computed.
        let context = stack.newContext()
        let grace = try #require(try DerivedAttributeTests.fetch(stack, "Author", "name", where: NSPredicate(format: "name BEGINSWITH 'G'"), in: context).first)
        grace.setValue("Grace", forKey: "name")
        try context.save()
        #expect(try Self.values(stack, "Post", "authorName", by: "title") as? [String] == ["Ada", "Ada", "Grace"])
        #expect(try Self.ints(stack, "Author", "totalWords", by: "name") == [32, 300])
    }

    @Test(arguments: Kind.available)
    func aBatchInsertComputesTheNewRowsValues(kind: Kind) throws {
        let stack = try Self.stack(kind)
        try Self.blog(stack)
        let before = Date()
        // A value given for a derived attribute is replaced, as a save replaces it.
        let posts = NSBatchInsertRequest(entityName: "Post", objects: [
            ["title": "new", "words": 5, "titleUppercase": "wrong"],
            ["title": "other", "words": 7],
        ])
        _ = try stack.context.execute(posts)
        let inserted = try DerivedAttributeTests.fetch(stack, "Post", "title", where: NSPredicate(format: "title IN {'new', 'other'}"), in: stack.newContext())
        #expect(inserted.map { $0.value(forKey: "titleUppercase") as? String } == ["NEW", "OTHER"])
        #expect(inserted.allSatisfy { $0.value(forKey: "authorName") == nil })
        #expect(inserted.allSatisfy { ($0.value(forKey: "modified") as? Date).map { $0 >= before.addingTimeInterval(-1) } == true })

        let authors = NSBatchInsertRequest(entityName: "Author", objects: [["name": "Zoé", "postCount": 99]])
        _ = try stack.context.execute(authors)
        #expect(try Self.values(stack, "Author", "searchName", by: "name") as? [String] == ["ada", "grace", "zoe"])
        #expect(try Self.ints(stack, "Author", "postCount", by: "name") == [2, 1, 0])
        #expect(try Self.ints(stack, "Author", "totalWords", by: "name") == [30, 300, 0])
    }

    @Test(arguments: Kind.available)
    func aBatchDeleteRecomputesCountsAndSumsOfWhatRemains(kind: Kind) throws {
        let stack = try Self.stack(kind)
        try Self.blog(stack)
        #expect(try Self.ints(stack, "Tag", "postCount", by: "label") == [2])
        let delete = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<any NSFetchRequestResult>(entityName: "Post"))
        delete.fetchRequest.predicate = NSPredicate(format: "title IN {'a1', 'g1'}")
        _ = try stack.context.execute(delete)
        #expect(try Self.ints(stack, "Author", "postCount", by: "name") == [1, 0])
        #expect(try Self.ints(stack, "Author", "totalWords", by: "name") == [20, 0])
        // Through the join table of a many-to-many relationship.
        #expect(try Self.ints(stack, "Tag", "postCount", by: "label") == [0])

        // An author deleted: the posts its rule cascades to go too, and nothing reads them.
        let authors = NSBatchDeleteRequest(fetchRequest: NSFetchRequest<any NSFetchRequestResult>(entityName: "Author"))
        authors.fetchRequest.predicate = NSPredicate(format: "name == 'Ada'")
        _ = try stack.context.execute(authors)
        #expect(try Self.values(stack, "Post", "title", by: "title").isEmpty)
        #expect(try Self.ints(stack, "Author", "postCount", by: "name") == [0])
    }

    /// `now()` declared on a sub-entity, and a batch update of its parent entity: the sub-entity's
    /// rows are stamped, the others not (the SQL stores stopped with "index out of range").
    @Test(arguments: Kind.available)
    func nowOnASubentityUnderABatchUpdateOfItsParent(kind: Kind) throws {
        let item = NSEntityDescription(); item.name = "Item"
        let special = NSEntityDescription(); special.name = "Special"
        item.subentities = [special]
        let name = NSAttributeDescription(); name.name = "name"; name.attributeType = .stringAttributeType
        let touched = NSDerivedAttributeDescription(); touched.name = "touched"; touched.attributeType = .dateAttributeType
        touched.derivationExpression = NSExpression(format: "now()")
        item.properties = [name]
        special.properties = [touched]
        let model = NSManagedObjectModel()
        model.entities = [item, special]
        let stack: TestStack
        switch kind {
        case .sqlite: stack = try TestStack(model: model)
        case .inMemory: stack = try TestStack(model: model, inMemory: true)
        case .postgreSQL: stack = try TestStack(model: model, database: PostgreSQLTestDatabase())
        }
        stack.insert("Special", ["name": "s"])
        stack.insert("Item", ["name": "i"])
        try stack.context.save()
        let before = try #require(try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Special")).first?.value(forKey: "touched") as? Date)
        let update = NSBatchUpdateRequest(entityName: "Item")
        update.propertiesToUpdate = ["name": "b"]
        _ = try stack.context.execute(update)
        let after = try #require(try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Special")).first?.value(forKey: "touched") as? Date)
        #expect(after > before)
        #expect(try stack.newContext().fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).allSatisfy { $0.value(forKey: "name") as? String == "b" })
    }
}
