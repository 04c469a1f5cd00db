import Foundation
import Testing
@testable import CoreData

/// A model's fetch request templates: read from Xcode's `<fetchRequest>` elements
/// (`Fixtures/Blog.xcdatamodeld`) or set in code, used with their variables substituted,
/// immutable once the model is in use.
@Suite("Fetch request templates")
struct FetchRequestTemplateTests {
    static var blog: URL { ModelTestSupport.fixture("Blog.xcdatamodeld") }

    @Test func templatesAreReadFromTheModelFile() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: Self.blog)
        let templates = model.fetchRequestTemplatesByName
        #expect(Set(templates.keys) == ["AllAuthors", "LongPosts", "PostsByAuthor"])
        let all = try #require(model.fetchRequestTemplate(forName: "AllAuthors"))
        #expect(all.entity === model.entitiesByName["Author"])
        #expect(all.entityName == "Author")
        #expect(all.predicate == nil)
        let long = try #require(model.fetchRequestTemplate(forName: "LongPosts"))
        #expect(long.entity === model.entitiesByName["Post"])
        #expect(long.predicate?.formatText == "words >= 1000")
        #expect(long.fetchLimit == 10)
        #expect(long.includesSubentities)
        #expect(!long.returnsObjectsAsFaults)
        #expect(model.fetchRequestTemplate(forName: "PostsByAuthor")?.predicate?.formatText == "author.name == $NAME")
        #expect(model.fetchRequestTemplate(forName: "Missing") == nil)
        #expect(model.fetchRequestFromTemplate(withName: "Missing", substitutionVariables: [:]) == nil)

        // The Library model's template too; no note says it was left unread any more.
        let library = try XcodeModelReader.read(at: ModelTestSupport.fixture("Library.xcdatamodeld"))
        let overdue = try #require(library.model.fetchRequestTemplate(forName: "OverdueLoans"))
        #expect(overdue.entity === library.model.entitiesByName["Loan"])
        #expect(overdue.predicate?.formatText.hasSuffix("dueDate < $NOW") == true)
        #expect(!library.notes.contains { $0.contains("OverdueLoans") })
    }

    @Test(arguments: [false, true])
    func aTemplateFetchesWithItsVariablesSubstituted(inMemory: Bool) throws {
        let stack = try TestStack(model: NSManagedObjectModel(validatingContentsOf: Self.blog), inMemory: inMemory)
        let ada = stack.insert("Author", ["name": "Ada"])
        let grace = stack.insert("Author", ["name": "Grace"])
        for (title, words, author) in [("Notes", 1200, ada), ("Letter", 300, ada), ("Compilers", 5000, grace)] {
            stack.insert("Post", ["title": title, "words": words, "author": author])
        }
        try stack.context.save()

        let model = stack.coordinator.managedObjectModel
        let request = try #require(model.fetchRequestFromTemplate(withName: "PostsByAuthor", substitutionVariables: ["NAME": "Ada"]))
        #expect(request.predicate?.formatText == #"author.name == "Ada""#)
        request.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)] // a copy: it can change
        let titles = try stack.context.fetch(request).compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }
        #expect(titles == ["Letter", "Notes"])
        // The template itself keeps its variable, and is used as it is where it has none.
        #expect(model.fetchRequestTemplate(forName: "PostsByAuthor")?.predicate?.formatText == "author.name == $NAME")
        let long = try stack.context.fetch(try #require(model.fetchRequestTemplate(forName: "LongPosts")))
        #expect(Set(long.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }) == ["Notes", "Compilers"])
        #expect(try stack.context.count(for: try #require(model.fetchRequestTemplate(forName: "AllAuthors"))) == 2)
        // A variable left without a value: the SQLite store's fetch throws. (The in-memory
        // store's evaluator reads an unbound variable as nil and matches nothing.)
        let unbound = try #require(model.fetchRequestFromTemplate(withName: "PostsByAuthor", substitutionVariables: [:]))
        if !inMemory { #expect(throws: NSError.self) { try stack.context.fetch(unbound) } }
    }

    @Test func templatesSetInCodeAreCopiedAndMerged() throws {
        let model = TestModel.make()
        let template = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
        template.predicate = NSPredicate(format: "year > $YEAR")
        model.setFetchRequestTemplate(template, forName: "NewCars")
        #expect(model.fetchRequestTemplate(forName: "NewCars") === template)
        model.setFetchRequestTemplate(NSFetchRequest<NSFetchRequestResult>(entityName: "Person"), forName: "People")
        model.setFetchRequestTemplate(nil, forName: "People")
        #expect(Array(model.fetchRequestTemplatesByName.keys) == ["NewCars"])

        template.entity = model.entitiesByName["Car"]
        let copy = try #require(model.copy() as? NSManagedObjectModel)
        let copied = try #require(copy.fetchRequestTemplate(forName: "NewCars"))
        #expect(copied !== template)
        #expect(copied.entity === copy.entitiesByName["Car"])
        #expect(copied.predicate?.formatText == "year > $YEAR")

        let other = NSManagedObjectModel()
        let plane = NSEntityDescription()
        plane.name = "Plane"
        other.entities = [plane]
        other.setFetchRequestTemplate(NSFetchRequest<NSFetchRequestResult>(entityName: "Plane"), forName: "Planes")
        let merged = try #require(NSManagedObjectModel(byMerging: [model, other]))
        #expect(Set(merged.fetchRequestTemplatesByName.keys) == ["NewCars", "Planes"])
        #expect(merged.fetchRequestTemplate(forName: "Planes")?.entityName == "Plane")
        // Two templates of one name cannot be merged.
        other.setFetchRequestTemplate(NSFetchRequest<NSFetchRequestResult>(entityName: "Plane"), forName: "NewCars")
        #expect(NSManagedObjectModel(byMerging: [model, other]) == nil)
    }

    @Test func aTemplateOfAModelInUseCanBeCopiedAndChanged() throws {
        let stack = try TestStack(model: NSManagedObjectModel(validatingContentsOf: Self.blog))
        let template = try #require(stack.model.fetchRequestTemplate(forName: "LongPosts"))
        let copy = try #require(template.copy() as? NSFetchRequest<NSFetchRequestResult>)
        copy.fetchLimit = 1
        copy.predicate = nil
        #expect(copy.fetchLimit == 1)
        #expect(template.fetchLimit == 10)
        #expect(template.predicate != nil)
    }

    @Test func changingATemplateOfAModelInUseStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let model = TestModel.make()
            model.setFetchRequestTemplate(NSFetchRequest<NSFetchRequestResult>(entityName: "Car"), forName: "Cars")
            _ = NSPersistentStoreCoordinator(managedObjectModel: model)
            model.fetchRequestTemplate(forName: "Cars")?.fetchLimit = 3
        }
        await #expect(processExitsWith: .failure) {
            let model = TestModel.make()
            _ = NSPersistentStoreCoordinator(managedObjectModel: model)
            model.setFetchRequestTemplate(NSFetchRequest<NSFetchRequestResult>(entityName: "Car"), forName: "Cars")
        }
    }

    @Test func templatesXcodeCouldNotHaveWrittenAreRefused() {
        XcodeModelReaderTests.expectRefused([
            (#"<entity name="A"/><fetchRequest entity="A"/>"#, "a fetch request template (<fetchRequest>) without a name"),
            (#"<entity name="A"/><fetchRequest name="T" entity="A"/><fetchRequest name="T" entity="A"/>"#, "two fetch request templates named 'T'"),
            (#"<entity name="A"/><fetchRequest name="T" entity="B"/>"#, "an entity 'B' for the fetch request template 'T', but there is no such entity"),
            (#"<entity name="A"/><fetchRequest name="T"/>"#, "no destination entity for the fetch request template 'T'"),
            (#"<entity name="A"/><fetchRequest name="T" entity="A" predicateString="x =="/>"#, "an invalid predicate for the fetch request template 'T'"),
            (#"<entity name="A"/><fetchRequest name="T" entity="A" fetchLimit="-1"/>"#, "an invalid fetchLimit '-1' for the fetch request template 'T'"),
            (#"<entity name="A"/><fetchRequest name="T" entity="A"><entity name="B"/></fetchRequest>"#, "an element <entity> inside <fetchRequest>"),
        ])
    }
}
