import Foundation
import Testing
@testable import CoreData

/// Author's class, with fetched properties declared as `@NSManaged` ones are on Apple platforms.
final class FPAuthor: NSManagedObject {
    @Managed var name: String?
    @Managed var booksByMe: [NSManagedObject]
    @Managed var longBooks: NSArray?
    @Managed var namesakes: Set<FPAuthor>
    @Managed var allBooks: [NSManagedObject]?
}

@Suite("Fetched properties")
struct FetchedPropertyTests {
    /// A stack with Ada (three books, one with Grace) and Grace.
    static func library(inMemory: Bool = false) throws -> (TestStack, ada: NSManagedObject, grace: NSManagedObject) {
        let stack = try TestStack(model: FetchedPropertyTestModel.make(), inMemory: inMemory)
        let ada = stack.insert("Author", ["name": "Ada"])
        let grace = stack.insert("Author", ["name": "Grace"])
        for (title, pages, authors) in [("Notes", 120, [ada]), ("Engines", 450, [ada, grace]), ("Analysis", 310, [ada]), ("Compilers", 90, [grace])] {
            stack.insert("Book", ["title": title, "pages": pages, "authors": Set(authors)])
        }
        try stack.context.save()
        return (stack, ada, grace)
    }

    static func titles(_ value: Any?) -> [String] {
        (value as? [NSManagedObject] ?? []).map { $0.value(forKey: "title") as? String ?? "?" }
    }

    static func fetchAuthor(_ name: String, in context: NSManagedObjectContext) throws -> NSManagedObject {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Author")
        request.predicate = NSPredicate(format: "name == %@", name)
        return try #require(try context.fetch(request).first)
    }

    // MARK: Values

    @Test(arguments: [false, true])
    func fetchSourceSelectsTheObjectsOwnRows(inMemory: Bool) throws {
        let (stack, ada, grace) = try Self.library(inMemory: inMemory)
        #expect(Self.titles(ada.value(forKey: "booksByMe")) == ["Analysis", "Engines", "Notes"])
        #expect(Self.titles(grace.value(forKey: "booksByMe")) == ["Compilers", "Engines"])
        // From a fresh context, on objects that are faults.
        let other = stack.newContext()
        let faultyAda = try Self.fetchAuthor("Ada", in: other)
        #expect(Self.titles(faultyAda.value(forKey: "booksByMe")) == ["Analysis", "Engines", "Notes"])
        #expect((faultyAda.value(forKey: "booksByMe") as? [NSManagedObject])?.allSatisfy { $0.managedObjectContext === other } == true)
    }

    @Test(arguments: [false, true])
    func fetchedPropertyUserInfoIsReadThroughTheVariable(inMemory: Bool) throws {
        let (stack, ada, _) = try Self.library(inMemory: inMemory)
        defer { withExtendedLifetime(stack) {} }
        #expect(Self.titles(ada.value(forKey: "longBooks")) == ["Analysis", "Engines"])
    }

    @Test(arguments: [false, true])
    func keyPathsFromTheSourceAreReadAtTheFirstAccess(inMemory: Bool) throws {
        let (stack, ada, _) = try Self.library(inMemory: inMemory)
        let twin = stack.insert("Author", ["name": "Ada"])
        try stack.context.save()
        let namesakes = try #require(ada.value(forKey: "namesakes") as? [NSManagedObject])
        #expect(namesakes.count == 1 && namesakes.first === twin)
        #expect((twin.value(forKey: "namesakes") as? [NSManagedObject])?.first === ada)
    }

    @Test(arguments: [false, true])
    func subqueryVariablesNeedNoBinding(inMemory: Bool) throws {
        let (stack, _, grace) = try Self.library(inMemory: inMemory)
        defer { withExtendedLifetime(stack) {} }
        #expect((grace.value(forKey: "prolific") as? [NSManagedObject])?.map { $0.value(forKey: "name") as? String } == ["Ada"])
    }

    @Test func valueIsAnArrayInTheRequestsOrder() throws {
        let (stack, ada, _) = try Self.library()
        defer { withExtendedLifetime(stack) {} }
        let value = ada.value(forKey: "booksByMe")
        #expect(value is [NSManagedObject])
        #expect((value as? [NSManagedObject])?.count == 3)
        // Unsorted: primary-key (insertion) order, as a plain fetch.
        #expect(Self.titles(ada.value(forKey: "allBooks")) == ["Notes", "Engines", "Analysis", "Compilers"])
        // Typed, dotted and several at once.
        #expect((ada.value(forKey: "booksByMe") as? [NSManagedObject])?.first?.entity.name == "Book")
        #expect(ada.value(forKeyPath: "booksByMe.title") as? [String] == ["Analysis", "Engines", "Notes"])
        #expect(Self.titles(ada.dictionaryWithValues(forKeys: ["longBooks"])["longBooks"]) == ["Analysis", "Engines"])
        #expect(Self.titles(ada.primitiveValue(forKey: "longBooks")) == ["Analysis", "Engines"])
    }

    @Test func otherResultTypesAreReturnedAsTheFetchReturnsThem() throws {
        let (stack, ada, _) = try Self.library()
        defer { withExtendedLifetime(stack) {} }
        let property = try #require(ada.entity.propertiesByName["booksByMe"] as? NSFetchedPropertyDescription)
        let context = try #require(ada.managedObjectContext)
        let ids = property.copy() as! NSFetchedPropertyDescription
        ids.fetchRequest?.resultType = .managedObjectIDResultType
        let idValue = try ada.evaluate(ids, in: context)
        #expect((idValue as? [Any])?.compactMap { $0 as? NSManagedObjectID }.count == 3)
        let count = property.copy() as! NSFetchedPropertyDescription
        count.fetchRequest?.resultType = .countResultType
        #expect((try ada.evaluate(count, in: context) as? [Any])?.first as? NSNumber == 3)
    }

    @Test func subEntitiesInheritFetchedProperties() throws {
        let (stack, _, _) = try Self.library()
        let editor = stack.insert("Editor", ["name": "Grace", "imprint": "Navy"])
        #expect(Self.titles(editor.value(forKey: "longBooks")) == ["Analysis", "Engines"])
        #expect(Self.titles(editor.value(forKey: "booksByMe")).isEmpty)
        #expect((editor.value(forKey: "namesakes") as? [NSManagedObject])?.count == 1)
        #expect(editor.value(forKey: "imprint") as? String == "Navy")
    }

    @Test func managedPropertiesReadFetchedProperties() throws {
        let model = FetchedPropertyTestModel.make()
        model.entitiesByName["Author"]?.managedObjectClassName = NSStringFromClass(FPAuthor.self)
        let stack = try TestStack(model: model)
        let ada = FPAuthor(context: stack.context)
        ada.name = "Ada"
        let twin = FPAuthor(context: stack.context)
        twin.name = "Ada"
        for (title, pages) in [("Notes", 120), ("Engines", 450)] {
            stack.insert("Book", ["title": title, "pages": pages, "authors": Set([ada])])
        }
        try stack.context.save()
        #expect(Self.titles(ada.booksByMe) == ["Engines", "Notes"])
        #expect(Self.titles(ada.longBooks as? [NSManagedObject]) == ["Engines"])
        #expect(ada.namesakes == [twin])
        #expect(Self.titles(ada.allBooks) == ["Notes", "Engines"])
        // Read-only here too; no change recorded.
        ada.booksByMe = []
        ada.allBooks = nil
        #expect(Self.titles(ada.booksByMe) == ["Engines", "Notes"])
        #expect(!ada.hasChanges)
        // The same values as `value(forKey:)`, one cache.
        #expect((ada.value(forKey: "booksByMe") as? [NSManagedObject]).map { $0.elementsEqual(ada.booksByMe, by: ===) } == true)
    }

    // MARK: Lazy, then cached until refreshed

    @Test func nothingIsFetchedUntilTheFirstRead() throws {
        let (stack, _, _) = try Self.library()
        let other = stack.newContext()
        let ada = try Self.fetchAuthor("Ada", in: other)
        _ = ada.value(forKey: "name")
        let beforeRead = stack.readStatements
        let books = Self.titles(ada.value(forKey: "booksByMe"))
        #expect(books == ["Analysis", "Engines", "Notes"])
        let afterRead = stack.readStatements
        #expect(afterRead > beforeRead)
        // Cached: reading again runs no statement.
        #expect(Self.titles(ada.value(forKey: "booksByMe")) == books)
        #expect(Self.titles(ada.value(forKey: "booksByMe")) == books)
        #expect(stack.readStatements == afterRead)
    }

    @Test(arguments: [false, true])
    func theValueReflectsTheDataAtTheFirstReadNotAtCreation(inMemory: Bool) throws {
        let (stack, _, _) = try Self.library(inMemory: inMemory)
        let newcomer = stack.insert("Author", ["name": "Edsger"])
        // Books written after the object was created, before its property is read; one unsaved.
        stack.insert("Book", ["title": "Structured", "pages": 220, "authors": Set([newcomer])])
        try stack.context.save()
        stack.insert("Book", ["title": "Goto", "pages": 2, "authors": Set([newcomer])])
        #expect(Self.titles(newcomer.value(forKey: "booksByMe")) == ["Goto", "Structured"])
    }

    @Test(arguments: [false, true])
    func theValueStaysUntilTheObjectIsRefreshed(inMemory: Bool) throws {
        let (stack, ada, _) = try Self.library(inMemory: inMemory)
        #expect(Self.titles(ada.value(forKey: "booksByMe")) == ["Analysis", "Engines", "Notes"])
        stack.insert("Book", ["title": "Bernoulli", "pages": 25, "authors": Set([ada])])
        try stack.context.save()
        // Static: the new book is not seen, whether changes are pending or saved.
        #expect(Self.titles(ada.value(forKey: "booksByMe")) == ["Analysis", "Engines", "Notes"])
        stack.context.refresh(ada, mergeChanges: true)
        #expect(Self.titles(ada.value(forKey: "booksByMe")) == ["Analysis", "Bernoulli", "Engines", "Notes"])

        stack.insert("Book", ["title": "Difference", "pages": 40, "authors": Set([ada])])
        #expect(Self.titles(ada.value(forKey: "booksByMe")).count == 4)
        stack.context.refresh(ada, mergeChanges: false)
        // The unsaved book still holds Ada in its `authors`: the fetch sees pending changes.
        #expect(Self.titles(ada.value(forKey: "booksByMe")) == ["Analysis", "Bernoulli", "Difference", "Engines", "Notes"])
    }

    @Test func refreshAllObjectsAndResetForgetTheValue() throws {
        let (stack, ada, _) = try Self.library()
        #expect(Self.titles(ada.value(forKey: "longBooks")) == ["Analysis", "Engines"])
        stack.insert("Book", ["title": "Tables", "pages": 900])
        try stack.context.save()
        #expect(Self.titles(ada.value(forKey: "longBooks")) == ["Analysis", "Engines"])
        stack.context.refreshAllObjects()
        #expect(Self.titles(ada.value(forKey: "longBooks")) == ["Analysis", "Engines", "Tables"])

        let other = stack.newContext()
        let otherAda = try Self.fetchAuthor("Ada", in: other)
        #expect(Self.titles(otherAda.value(forKey: "longBooks")).count == 3)
        other.reset()
        #expect(otherAda.managedObjectContext == nil)
        #expect(otherAda.value(forKey: "longBooks") as? [NSManagedObject] == [])
        let again = try Self.fetchAuthor("Ada", in: other)
        #expect(Self.titles(again.value(forKey: "longBooks")).count == 3)
    }

    @Test func mergingAnotherContextsSaveRefreshesTheValue() throws {
        let (stack, ada, _) = try Self.library()
        ada.setValue("Ada L.", forKey: "name")
        try stack.context.save()
        let other = stack.newContext()
        let otherAda = try Self.fetchAuthor("Ada L.", in: other)
        #expect(Self.titles(otherAda.value(forKey: "booksByMe")).count == 3)
        let token = NotificationCenter.default.addObserver(forName: .NSManagedObjectContextDidSave, object: stack.context, queue: nil) { note in
            nonisolated(unsafe) let note = note
            other.mergeChanges(fromContextDidSave: note)
        }
        defer { NotificationCenter.default.removeObserver(token) }
        stack.insert("Book", ["title": "Bernoulli", "pages": 25, "authors": Set([ada])])
        try stack.context.save() // Ada is updated (her books changed): the merge refreshes her
        #expect(Self.titles(otherAda.value(forKey: "booksByMe")) == ["Analysis", "Bernoulli", "Engines", "Notes"])
    }

    // MARK: Unsaved objects and child contexts

    @Test(arguments: [false, true])
    func anUnsavedObjectFetchesItsPendingRows(inMemory: Bool) throws {
        let (stack, _, _) = try Self.library(inMemory: inMemory)
        let newcomer = stack.insert("Author", ["name": "Barbara"])
        #expect(newcomer.objectID.isTemporaryID)
        #expect(Self.titles(newcomer.value(forKey: "booksByMe")).isEmpty)
        #expect(Self.titles(newcomer.value(forKey: "longBooks")) == ["Analysis", "Engines"])
        let unsaved = NSEntityDescription.insertNewObject(forEntityName: "Author", into: stack.context)
        unsaved.setValue("Liskov", forKey: "name")
        stack.insert("Book", ["title": "Abstraction", "pages": 10, "authors": Set([unsaved])])
        #expect(Self.titles(unsaved.value(forKey: "booksByMe")) == ["Abstraction"])
        // An object in no context has nothing to fetch in.
        let loose = NSManagedObject(entity: newcomer.entity, insertInto: nil)
        #expect(loose.value(forKey: "booksByMe") as? [NSManagedObject] == [])
    }

    @Test(arguments: [false, true])
    func aChildContextFetchesThroughItsParent(inMemory: Bool) throws {
        let (stack, _, _) = try Self.library(inMemory: inMemory)
        let (parent, child) = stack.parentAndChild()
        try child.performAndWait {
            let ada = try Self.fetchAuthor("Ada", in: child)
            #expect(Self.titles(ada.value(forKey: "booksByMe")) == ["Analysis", "Engines", "Notes"])
            #expect((ada.value(forKey: "booksByMe") as? [NSManagedObject])?.allSatisfy { $0.managedObjectContext === child } == true)
            // Unsaved in the child: the child sees it after a refresh; `$FETCH_SOURCE.name` is read in the child.
            let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: child)
            book.setValue("Bernoulli", forKey: "title")
            book.setValue(600, forKey: "pages")
            book.mutableSetValue(forKey: "authors").add(ada)
            let twin = NSEntityDescription.insertNewObject(forEntityName: "Author", into: child)
            twin.setValue("Ada", forKey: "name")
            child.refresh(ada, mergeChanges: true)
            #expect(Self.titles(ada.value(forKey: "booksByMe")) == ["Analysis", "Bernoulli", "Engines", "Notes"])
            #expect(Self.titles(ada.value(forKey: "longBooks")) == ["Analysis", "Bernoulli", "Engines"])
            #expect((ada.value(forKey: "namesakes") as? [NSManagedObject])?.first === twin)
            #expect((twin.value(forKey: "namesakes") as? [NSManagedObject])?.first === ada)
            try child.save()
        }
        try parent.performAndWait {
            let ada = try Self.fetchAuthor("Ada", in: parent)
            #expect(Self.titles(ada.value(forKey: "booksByMe")) == ["Analysis", "Bernoulli", "Engines", "Notes"])
            #expect((ada.value(forKey: "namesakes") as? [NSManagedObject])?.count == 1)
        }
    }

    // MARK: Not a stored value

    @Test func fetchedPropertiesAreNotChangesAndAreNotSaved() throws {
        let (stack, ada, _) = try Self.library()
        _ = ada.value(forKey: "booksByMe")
        #expect(!ada.hasChanges && !stack.context.hasChanges)
        #expect(ada.changedValues().isEmpty)
        #expect(ada.committedValues(forKeys: nil)["booksByMe"] == nil)
        #expect(ada.committedValues(forKeys: ["booksByMe", "name"]).keys.sorted() == ["name"])
        // Read-only: setting is ignored and changes nothing.
        ada.setValue([NSManagedObject](), forKey: "booksByMe")
        ada.setPrimitiveValue(nil, forKey: "booksByMe")
        #expect(Self.titles(ada.value(forKey: "booksByMe")).count == 3)
        #expect(!ada.hasChanges && ada.changedValues().isEmpty)
        // No column in the table.
        let columns = try RawSQLite.query(stack.url.path, "SELECT name FROM pragma_table_info('ZAUTHOR')").compactMap(\.first).compactMap { $0 }
        #expect(!columns.contains { $0.uppercased().contains("BOOKSBYME") })
        #expect(columns.contains("ZBORN"))
    }

    @Test func aPredicateOnAFetchedPropertyIsRefusedNotCrashed() throws {
        let (stack, _, _) = try Self.library()
        #expect(throws: NSError.self) {
            _ = try stack.fetch("Author") { $0.predicate = NSPredicate(format: "ANY booksByMe.title == 'Notes'") }
        }
    }

    // MARK: Errors at access

    @Test func anUnboundVariableGivesAnEmptyArrayAndTheErrorSays() throws {
        let (stack, ada, _) = try Self.library()
        defer { withExtendedLifetime(stack) {} }
        #expect(ada.value(forKey: "unbound") as? [NSManagedObject] == [])
        let property = try #require(ada.entity.propertiesByName["unbound"] as? NSFetchedPropertyDescription)
        let error = #expect(throws: NSError.self) { try ada.evaluate(property, in: ada.managedObjectContext!) }
        #expect(error?.domain == NSCocoaErrorDomain && error?.code == NSCoreDataError)
        #expect(error?.localizedDescription.contains("$MINIMUM") == true)
        #expect(error?.localizedDescription.contains("'Author.unbound'") == true)
        // Not cached: still an empty array, and still no crash.
        #expect(ada.value(forKey: "unbound") as? [NSManagedObject] == [])
    }

    @Test(arguments: [false, true])
    func aMalformedPredicateInCodeFailsAtAccess(inMemory: Bool) throws {
        let (stack, ada, _) = try Self.library(inMemory: inMemory)
        defer { withExtendedLifetime(stack) {} }
        #expect(ada.value(forKey: "malformed") as? [NSManagedObject] == [])
        let property = try #require(ada.entity.propertiesByName["malformed"] as? NSFetchedPropertyDescription)
        let error = #expect(throws: NSError.self) { try ada.evaluate(property, in: ada.managedObjectContext!) }
        #expect(error?.code == 2048)
    }

    @Test func aMissingRequestOrEntityFailsAtAccess() throws {
        let model = FetchedPropertyTestModel.make()
        let author = try #require(model.entitiesByName["Author"])
        let noRequest = NSFetchedPropertyDescription(); noRequest.name = "nothing"
        let elsewhere = NSFetchedPropertyDescription(); elsewhere.name = "elsewhere"
        elsewhere.fetchRequest = NSFetchRequest<NSFetchRequestResult>(entityName: "Publisher")
        author.properties = author.properties + [noRequest, elsewhere]
        let stack = try TestStack(model: model)
        let ada = stack.insert("Author", ["name": "Ada"])
        #expect(ada.value(forKey: "nothing") as? [NSManagedObject] == [])
        #expect(ada.value(forKey: "elsewhere") as? [NSManagedObject] == [])
        let noRequestError = #expect(throws: NSError.self) { try ada.evaluate(noRequest, in: stack.context) }
        #expect(noRequestError?.localizedDescription.contains("no fetch request") == true)
        let elsewhereError = #expect(throws: NSError.self) { try ada.evaluate(elsewhere, in: stack.context) }
        #expect(elsewhereError?.localizedDescription.contains("'Publisher'") == true)
    }

    // MARK: Models read from Xcode's files

    @Test func theLibraryFixturesFetchedPropertyNeedsAVariableItCannotHave() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.fixture("Library.xcdatamodeld"))
        let stack = try TestStack(model: model)
        let author = stack.insert("Author", ["name": "Ada"])
        // `$LAST_YEAR` has no value: an empty array, not a crash.
        #expect(author.value(forKey: "recentBooks") as? [NSManagedObject] == [])
        let property = try #require(author.entity.propertiesByName["recentBooks"] as? NSFetchedPropertyDescription)
        let error = #expect(throws: NSError.self) { try author.evaluate(property, in: stack.context) }
        #expect(error?.localizedDescription.contains("$LAST_YEAR") == true)
    }

    @Test func aModelFromXcodesFormatEvaluatesItsFetchedProperty() throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("Notes.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Note" representedClassName="Note" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="folder" optional="YES" attributeType="String"/>
                <fetchedProperty name="sameFolder" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Note" predicateString="folder == $FETCH_SOURCE.folder AND title BEGINSWITH $FETCHED_PROPERTY.userInfo.prefix"/>
                    <userInfo>
                        <entry key="prefix" value="T"/>
                    </userInfo>
                </fetchedProperty>
            </entity>
        </model>
        """.utf8).write(to: folder.appendingPathComponent("contents"))
        let stack = try TestStack(model: try NSManagedObjectModel(validatingContentsOf: folder))
        let first = stack.insert("Note", ["title": "Todo", "folder": "a"])
        stack.insert("Note", ["title": "Tea", "folder": "a"])
        stack.insert("Note", ["title": "Milk", "folder": "a"])
        stack.insert("Note", ["title": "Tax", "folder": "b"])
        try stack.context.save()
        let titles = (first.value(forKey: "sameFolder") as? [NSManagedObject] ?? []).compactMap { $0.value(forKey: "title") as? String }
        #expect(titles.sorted() == ["Tea", "Todo"])
    }
}
