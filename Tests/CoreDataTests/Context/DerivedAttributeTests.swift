import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Derived attributes (`NSDerivedAttributeDescription`), computed when a context saves to the
/// store, on the Blog model (`Fixtures/Blog.xcdatamodeld`, as Xcode writes derived attributes):
/// `Author.postCount` (`posts.@count`), `Author.searchName` (`canonical:(name)`),
/// `Author.totalWords` (`posts.words.@sum`), `Post.authorName` (`author.name`), `Post.modified`
/// (`now()`), `Post.titleUppercase` (`uppercase:(title)`), `Tag.postCount` (`posts.@count`,
/// many-to-many). Every scenario runs on both stores, which must agree.
@Suite("Derived attributes")
struct DerivedAttributeTests {
    static func blog() throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.fixture("Blog.xcdatamodeld"))
    }

    static func int(_ object: NSManagedObject, _ key: String) -> Int64? { (object.value(forKey: key) as? NSNumber)?.int64Value }

    /// The values of `key` of the entity's objects, fetched with `predicate`, sorted by `key`.
    static func fetch(_ stack: TestStack, _ entity: String, _ key: String, where predicate: NSPredicate? = nil,
                      in context: NSManagedObjectContext? = nil) throws -> [NSManagedObject] {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = predicate
        request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
        return try (context ?? stack.context).fetch(request)
    }

    @Test func readFromXcodesFormatAndBuiltInCode() throws {
        let model = try Self.blog()
        let author = try #require(model.entitiesByName["Author"])
        let postCount = try #require(author.attributesByName["postCount"] as? NSDerivedAttributeDescription)
        #expect(postCount.derivationExpression.map { "\($0.node)" } == "posts.@count")
        #expect(postCount.attributeType == .integer64AttributeType)
        #expect((author.attributesByName["searchName"] as? NSDerivedAttributeDescription)?.derivationExpression.map { "\($0.node)" } == "canonical:(name)")
        #expect(!(author.attributesByName["name"] is NSDerivedAttributeDescription))
        #expect(model.entitiesByName["Post"]?.attributesByName["modified"] is NSDerivedAttributeDescription)

        // Built in code, and copied, it keeps its class and expression; its hash is its
        // derivation's (`VersionHashDerivedAndCompositeTests`), not a plain attribute's.
        let derived = NSDerivedAttributeDescription()
        derived.name = "postCount"
        derived.attributeType = .integer64AttributeType
        derived.derivationExpression = NSExpression(format: "posts.@count")
        let plain = NSAttributeDescription()
        plain.name = "postCount"
        plain.attributeType = .integer64AttributeType
        #expect(derived.versionHash != plain.versionHash)
        let copy = try #require(derived.copy() as? NSDerivedAttributeDescription)
        #expect(copy.derivationExpression === derived.derivationExpression)
        #expect(copy.attributeType == .integer64AttributeType)
        #expect(postCount.versionHash == derived.versionHash)
        // A model of no derived attribute does no work for them at save.
        let plainModel = TestModel.make()
        plainModel.freeze()
        #expect(plainModel.derivedAttributes.isEmpty)
        model.freeze()
        #expect(Set(model.derivedAttributes.map { "\($0.entity.name!).\($0.name)" })
                == ["Author.postCount", "Author.searchName", "Author.totalWords", "Post.authorName", "Post.modified", "Post.titleUppercase", "Tag.postCount"])
    }

    @Test(arguments: [false, true])
    func aCountChangesWhenARelatedObjectIsAddedAndTheSourceSaved(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.blog(), inMemory: inMemory)
        let ada = stack.insert("Author", ["name": "Ada"])
        let grace = stack.insert("Author", ["name": "Grace"])
        let notes = stack.insert("Post", ["title": "Notes", "words": 100, "author": ada])
        stack.insert("Post", ["title": "Letter", "words": 20, "author": ada])
        // Not before the save.
        #expect(Self.int(ada, "postCount") == 0)
        try stack.context.save()
        #expect(Self.int(ada, "postCount") == 2)
        #expect(Self.int(grace, "postCount") == 0)
        #expect(Self.int(ada, "totalWords") == 120)

        stack.insert("Post", ["title": "Compilers", "words": 5000, "author": grace])
        stack.insert("Post", ["title": "Cobol", "words": 700, "author": grace])
        stack.insert("Post", ["title": "Nanoseconds", "words": 30, "author": grace])
        try stack.context.save()
        #expect(Self.int(grace, "postCount") == 3)
        #expect(Self.int(grace, "totalWords") == 5730)

        // A post moves: both authors count again; a post is deleted.
        notes.setValue(grace, forKey: "author")
        try stack.context.save()
        #expect((Self.int(ada, "postCount"), Self.int(grace, "postCount")) == (1, 4))
        stack.context.delete(notes)
        try stack.context.save()
        #expect(Self.int(grace, "postCount") == 3)
        #expect(Self.int(grace, "totalWords") == 5730)

        // Fetched by predicate and sorted, in the store, in a context that never saw the objects.
        let other = stack.newContext()
        let prolific = try Self.fetch(stack, "Author", "postCount", where: NSPredicate(format: "postCount >= 2"), in: other)
        #expect(prolific.map { $0.value(forKey: "name") as? String } == ["Grace"])
        let byCount = try Self.fetch(stack, "Author", "postCount", in: other)
        #expect(byCount.map { $0.value(forKey: "name") as? String } == ["Ada", "Grace"])
        #expect(try other.count(for: {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
            request.predicate = NSPredicate(format: "totalWords > 1000")
            return request
        }()) == 1)
        if !inMemory {
            #expect(try stack.rows("SELECT ZNAME, ZPOSTCOUNT, ZTOTALWORDS FROM ZAUTHOR ORDER BY ZNAME") == [["Ada", "1", "20"], ["Grace", "3", "5730"]])
        }
    }

    @Test(arguments: [false, true])
    func aSumFollowsAChangeInARelatedObjectAlone(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.blog(), inMemory: inMemory)
        let ada = stack.insert("Author", ["name": "Ada"])
        let post = stack.insert("Post", ["title": "Notes", "words": 100, "author": ada])
        try stack.context.save()
        // Only the post changes; the author is written for its new sum.
        post.setValue(150, forKey: "words")
        #expect(!ada.isUpdated)
        try stack.context.save()
        #expect(Self.int(ada, "totalWords") == 150)
        let reread = try Self.fetch(stack, "Author", "name", in: stack.newContext())
        #expect(reread.map { Self.int($0, "totalWords") } == [150])
        // A change that leaves the derived values as they were does not write the author.
        post.setValue("Notes, revised", forKey: "title")
        let saved = SavedIDs()
        let observer = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: stack.context, queue: nil) { note in
            saved.updated = note.userInfo?[NSUpdatedObjectIDsKey] as? Set<NSManagedObjectID> ?? []
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try stack.context.save()
        #expect(saved.updated == [post.objectID])
    }

    @Test(arguments: [false, true])
    func canonicalAndCaseFunctionsOfAString(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.blog(), inMemory: inMemory)
        let author = stack.insert("Author", ["name": "Élodie DUPRÉ"])
        let post = stack.insert("Post", ["title": "Café crème", "author": author])
        try stack.context.save()
        #expect(author.value(forKey: "searchName") as? String == "elodie dupre")
        #expect(post.value(forKey: "titleUppercase") as? String == "CAFÉ CRÈME")
        let found = try Self.fetch(stack, "Author", "name", where: NSPredicate(format: "searchName == %@", "elodie dupre"), in: stack.newContext())
        #expect(found.count == 1)
        // It agrees with [cd] comparisons, and with canonical: in a predicate.
        #expect(try Self.fetch(stack, "Author", "name", where: NSPredicate(format: "name ==[cd] %@", "elodie dupre")).count == 1)
        #expect(try Self.fetch(stack, "Author", "name", where: NSPredicate(format: "canonical:(name) == searchName"), in: stack.newContext()).count == 1)
        author.setValue("Zoë", forKey: "name")
        try stack.context.save()
        #expect(author.value(forKey: "searchName") as? String == "zoe")
        author.setValue(nil, forKey: "name")
        try stack.context.save()
        #expect(author.value(forKey: "searchName") == nil)
    }

    @Test(arguments: [false, true])
    func aKeyPathThroughAToOneFollowsTheRelatedObject(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.blog(), inMemory: inMemory)
        let ada = stack.insert("Author", ["name": "Ada"])
        for title in ["A", "B", "C"] { stack.insert("Post", ["title": title, "author": ada]) }
        let orphan = stack.insert("Post", ["title": "D"])
        try stack.context.save()
        #expect(try Self.fetch(stack, "Post", "title").map { $0.value(forKey: "authorName") as? String } == ["Ada", "Ada", "Ada", nil])

        // Renamed in another context that reads only the author: its posts follow at the save.
        let other = stack.newContext()
        let author = try #require(try Self.fetch(stack, "Author", "name", in: other).first)
        author.setValue("Ada Lovelace", forKey: "name")
        try other.save()
        let posts = try Self.fetch(stack, "Post", "title", where: NSPredicate(format: "authorName == %@", "Ada Lovelace"), in: stack.newContext())
        #expect(posts.map { $0.value(forKey: "title") as? String } == ["A", "B", "C"])
        // A post given an author, and one that loses it (in the context that renamed the author).
        let post = other.object(with: orphan.objectID)
        post.setValue(author, forKey: "author")
        try other.save()
        #expect(post.value(forKey: "authorName") as? String == "Ada Lovelace")
        post.setValue(nil, forKey: "author")
        try other.save()
        #expect(post.value(forKey: "authorName") == nil)
    }

    @Test(arguments: [false, true])
    func nowIsTheTimeOfTheSaveThatWritesTheObject(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.blog(), inMemory: inMemory)
        let before = Date()
        let first = stack.insert("Post", ["title": "First"])
        let second = stack.insert("Post", ["title": "Second"])
        #expect(first.value(forKey: "modified") == nil)
        try stack.context.save()
        let saved = try #require(first.value(forKey: "modified") as? Date)
        #expect(saved >= before && saved <= Date())
        #expect(second.value(forKey: "modified") as? Date == saved)
        Thread.sleep(forTimeInterval: 0.01)
        second.setValue("Second, again", forKey: "title")
        try stack.context.save()
        let later = try #require(second.value(forKey: "modified") as? Date)
        #expect(later > saved)
        #expect(first.value(forKey: "modified") as? Date == saved)
        let reread = try Self.fetch(stack, "Post", "title", in: stack.newContext())
        #expect(reread.map { $0.value(forKey: "modified") as? Date } == [saved, later])
    }

    @Test(arguments: [false, true])
    func aCountOverAManyToManyRelationship(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.blog(), inMemory: inMemory)
        let swift = stack.insert("Tag", ["label": "swift"])
        let linux = stack.insert("Tag", ["label": "linux"])
        let a = stack.insert("Post", ["title": "A"])
        let b = stack.insert("Post", ["title": "B"])
        a.mutableSetValue(forKey: "tags").addObjects(from: [swift, linux])
        b.mutableSetValue(forKey: "tags").add(swift)
        try stack.context.save()
        #expect((Self.int(swift, "postCount"), Self.int(linux, "postCount")) == (2, 1))
        a.mutableSetValue(forKey: "tags").remove(swift)
        try stack.context.save()
        #expect((Self.int(swift, "postCount"), Self.int(linux, "postCount")) == (1, 1))
        let tags = try Self.fetch(stack, "Tag", "label", where: NSPredicate(format: "postCount == 1"), in: stack.newContext())
        #expect(tags.count == 2)
    }

    @Test(arguments: [false, true])
    func aValueSetByTheAppIsReplacedAtTheSave(inMemory: Bool) throws {
        let stack = try TestStack(model: Self.blog(), inMemory: inMemory)
        let ada = stack.insert("Author", ["name": "Ada", "postCount": 99, "searchName": "nobody"])
        try stack.context.save()
        #expect(Self.int(ada, "postCount") == 0)
        #expect(ada.value(forKey: "searchName") as? String == "ada")
    }

    @Test func aRequiredDerivedAttributeIsValidatedBeforeItIsComputed() throws {
        // As on Apple platforms: validation runs before the derivation, so a required derived
        // attribute needs a value (a default, or one set in awakeFromInsert) to be saved.
        let model = Self.model("canonical:(name)", type: .stringAttributeType)
        model.entitiesByName["Author"]?.attributesByName["derived"]?.isOptional = false
        let stack = try TestStack(model: model, inMemory: true)
        let ada = stack.insert("Author", ["name": "Ada"])
        #expect { try stack.context.save() } throws: { ($0 as NSError).code == NSValidationMissingMandatoryPropertyError }
        ada.setPrimitiveValue("", forKey: "derived")
        try stack.context.save()
        #expect(ada.value(forKey: "derived") as? String == "ada")
    }

    @Test func aChildContextsSaveLeavesTheComputingToTheSaveToTheStore() throws {
        let stack = try TestStack(model: Self.blog())
        let child = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        child.parent = stack.context
        let ada = NSEntityDescription.insertNewObject(forEntityName: "Author", into: child)
        ada.setValue("Ada", forKey: "name")
        let post = NSEntityDescription.insertNewObject(forEntityName: "Post", into: child)
        post.setValue(ada, forKey: "author")
        try child.save()
        let inParent = stack.context.object(with: ada.objectID)
        #expect(Self.int(inParent, "postCount") == 0)
        #expect(inParent.value(forKey: "searchName") == nil)
        try stack.context.save()
        #expect(Self.int(inParent, "postCount") == 1)
        #expect(inParent.value(forKey: "searchName") as? String == "ada")
    }

    /// A model of `Author` (name, posts) and `Post` (title, words, author) with one derived
    /// attribute of `type` on `Author`, deriving `expression`.
    static func model(_ expression: String?, type: NSAttributeType = .integer64AttributeType, transient: Bool = false) -> NSManagedObjectModel {
        let author = NSEntityDescription(); author.name = "Author"
        let post = NSEntityDescription(); post.name = "Post"
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let a = NSAttributeDescription(); a.name = name; a.attributeType = type; return a
        }
        let posts = NSRelationshipDescription(); posts.name = "posts"; posts.destinationEntity = post; posts.maxCount = 0
        let owner = NSRelationshipDescription(); owner.name = "author"; owner.destinationEntity = author; owner.maxCount = 1
        posts.inverseRelationship = owner; owner.inverseRelationship = posts
        let derived = NSDerivedAttributeDescription()
        derived.name = "derived"
        derived.attributeType = type
        derived.isTransient = transient
        derived.derivationExpression = expression.map { NSExpression(format: $0) }
        author.properties = [attribute("name", .stringAttributeType), derived, posts]
        post.properties = [attribute("title", .stringAttributeType), attribute("words", .integer32AttributeType), owner]
        let model = NSManagedObjectModel()
        model.entities = [author, post]
        return model
    }

    @Test(arguments: [
        ("posts", NSAttributeType.integer64AttributeType, "goes through the to-many relationship 'posts' without @count or @sum"),
        ("posts.@avg.words", .integer64AttributeType, "only @count and @sum"),
        ("posts.@sum", .integer64AttributeType, "@sum needs one attribute"),
        ("posts.@sum.title", .integer64AttributeType, "'title' is not a stored number attribute"),
        ("posts.@count", .stringAttributeType, "gives a number"),
        ("name.@count", .integer64AttributeType, "'name' is not a to-many relationship"),
        ("sqrt:(name)", .doubleAttributeType, "is not one of the derivations stores compute"),
        ("lowercase:(posts.@count)", .stringAttributeType, "lowercase: takes a string value, not 'posts.@count'"),
        ("canonical:(name)", .integer64AttributeType, "takes and gives strings"),
        ("now()", .stringAttributeType, "not a Date"),
        ("name", .integer64AttributeType, "of another type"),
        ("nickname", .stringAttributeType, "does not lead to an attribute ('nickname' of the entity 'Author')"),
        ("derived", .integer64AttributeType, "derives from itself"),
        ("1 + 2", .integer64AttributeType, "is not one of the derivations stores compute"),
    ])
    func derivationsThatStoresCannotComputeAreRefused(_ expression: String, _ type: NSAttributeType, _ fragment: String) throws {
        let folder = try TemporaryFolder()
        for storeType in [NSSQLiteStoreType, NSInMemoryStoreType] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model(expression, type: type))
            do {
                try coordinator.addPersistentStore(ofType: storeType, configurationName: nil, at: folder.url.appendingPathComponent("S.sqlite"))
                Issue.record("\(expression) was accepted")
            } catch let error as NSError {
                #expect(error.code == NSPersistentStoreInvalidTypeError)
                #expect(error.localizedDescription.contains("the derived attribute 'Author.derived' cannot be computed"))
                #expect(error.localizedDescription.contains(fragment), "\(error.localizedDescription) should mention \(fragment)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("S.sqlite").path))
    }

    @Test func derivationsOfEverySupportedShapeAreAccepted() throws {
        for (expression, type) in [("posts.@count", NSAttributeType.integer16AttributeType), ("posts.@sum.words", .doubleAttributeType),
                                   ("posts.words.@sum", .integer64AttributeType), ("name", .stringAttributeType),
                                   ("lowercase:(name)", .stringAttributeType), ("now()", .dateAttributeType)] {
            let stack = try TestStack(model: Self.model(expression, type: type), inMemory: true)
            stack.insert("Author", ["name": "Ada"])
            try stack.context.save()
        }
        // Without an expression, or transient (a derived value is stored): refused.
        for (model, fragment) in [(Self.model(nil), "it has no derivation expression"), (Self.model("posts.@count", transient: true), "transient")] {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            #expect {
                try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil)
            } throws: { error in
                (error as NSError).localizedDescription.contains(fragment)
            }
        }
    }

    @Test func derivedAttributesXcodeCouldNotHaveWrittenAreRefused() {
        XcodeModelReaderTests.expectRefused([
            (#"<entity name="A"><attribute name="n" optional="YES" attributeType="Integer 64" derived="YES"/></entity>"#,
             "no derivationExpression for the derived attribute 'A.n'"),
            (#"<entity name="A"><attribute name="n" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="posts.@"/></entity>"#,
             "an invalid derivationExpression 'posts.@' for the attribute 'A.n'"),
            (#"<entity name="A"><attribute name="n" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="posts.@count"/></entity>"#,
             "the derived attribute 'A.n', which cannot be computed: 'posts.@count': 'posts' is not a to-many relationship"),
        ])
    }
}

/// The updated objects' IDs of the last did-save notification.
private final class SavedIDs: @unchecked Sendable {
    var updated: Set<NSManagedObjectID> = []
}
