import Foundation
import Testing
@testable import CoreData
import TestSupport

/// The class Xcode generates for `Recipe` (`representedClassName=".Recipe"`, code generation "class").
final class Recipe: NSManagedObject {
    @Managed var title: String?
}

/// Spellings Xcode writes that a model written by hand would not: `Fixtures/Recipes.xcdatamodeld`
/// is shaped as Xcode saves a new single-version model.
@Suite("Models as Xcode writes them")
struct XcodeWrittenModelTests {
    static var recipes: URL { ModelTestSupport.fixture("Recipes.xcdatamodeld") }

    @Test func emptyCurrentVersionMarkerOfASingleVersionBundle() throws {
        let marker = try String(contentsOf: Self.recipes.appendingPathComponent(".xccurrentversion"), encoding: .utf8)
        #expect(marker.contains("<dict/>"))
        let result = try XcodeModelReader.read(at: Self.recipes)
        #expect(result.contentsURL.deletingLastPathComponent().lastPathComponent == "Recipes.xcdatamodel")
        #expect(Set(result.model.entitiesByName.keys) == ["Recipe", "Step"])
    }

    @Test func emptyCurrentVersionMarkerWithSeveralVersionsIsRefused() throws {
        let folder = try TemporaryFolder()
        let bundle = folder.url.appendingPathComponent("Recipes.xcdatamodeld")
        try FileManager.default.copyItem(at: Self.recipes, to: bundle)
        try FileManager.default.copyItem(at: bundle.appendingPathComponent("Recipes.xcdatamodel"),
                                         to: bundle.appendingPathComponent("Recipes 2.xcdatamodel"))
        XcodeModelReaderTests.expectUnreadable(bundle, code: 259, fragments: [".xccurrentversion", "'_XCCurrentVersionName'", "2 versions"])
    }

    @Test func transientAttributeWithoutATypeIsUndefined() throws {
        let result = try XcodeModelReaderTests.parse(#"<entity name="A"><attribute name="scratch" optional="YES" transient="YES"/></entity>"#)
        let scratch = try XcodeModelReaderTests.attribute(result.model, "A", "scratch")
        #expect(scratch.attributeType == .undefinedAttributeType)
        #expect(scratch.isTransient)
        let model = try NSManagedObjectModel(validatingContentsOf: Self.recipes)
        #expect(try XcodeModelReaderTests.attribute(model, "Recipe", "draftNotes").attributeType == .undefinedAttributeType)
        // A stored attribute still needs its type.
        do {
            _ = try XcodeModelReaderTests.parse(#"<entity name="A"><attribute name="x" optional="YES"/></entity>"#)
            Issue.record("an attribute without a type was read")
        } catch let error as NSError {
            #expect(error.localizedDescription.contains("no attributeType for the attribute 'A.x'"))
        }
    }

    @Test func booleanDefaultsOfIntegerAttributes() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: Self.recipes)
        let favorite = try XcodeModelReaderTests.attribute(model, "Recipe", "isFavorite")
        #expect((favorite.defaultValue as? NSNumber)?.int16Value == 0)
        let published = try XcodeModelReaderTests.attribute(model, "Recipe", "isPublished")
        #expect((published.defaultValue as? NSNumber)?.int32Value == 1)
        #expect((try XcodeModelReaderTests.attribute(model, "Recipe", "isVegan").defaultValue as? NSNumber)?.boolValue == false)
        #expect((try XcodeModelReaderTests.attribute(model, "Recipe", "servings").defaultValue as? NSNumber)?.int64Value == 4)
    }

    @Test func booleanAndIntegerDefaultSpellings() throws {
        let result = try XcodeModelReaderTests.parse("""
            <entity name="A">
                <attribute name="a" attributeType="Integer 64" defaultValueString="true"/>
                <attribute name="b" attributeType="Integer 16" defaultValueString="False"/>
                <attribute name="c" attributeType="Boolean" defaultValueString="2"/>
                <attribute name="d" attributeType="Boolean" defaultValueString="0.0"/>
                <attribute name="e" attributeType="Boolean" defaultValueString="NO"/>
            </entity>
            """)
        func number(_ name: String) throws -> NSNumber? { try XcodeModelReaderTests.attribute(result.model, "A", name).defaultValue as? NSNumber }
        #expect(try number("a")?.int64Value == 1)
        #expect(try number("b")?.int16Value == 0)
        #expect(try number("c")?.boolValue == true)
        #expect(try number("d")?.boolValue == false)
        #expect(try number("e")?.boolValue == false)
        // Text that is neither a number nor a Boolean is still refused.
        #expect(throws: NSError.self) {
            try XcodeModelReaderTests.parse(#"<entity name="A"><attribute name="a" attributeType="Integer 16" defaultValueString="maybe"/></entity>"#)
        }
    }

    @Test func currentModuleClassNamesResolveAsBareNames() throws {
        let model = try NSManagedObjectModel(validatingContentsOf: Self.recipes)
        #expect(model.entitiesByName["Recipe"]?.managedObjectClassName == ".Recipe")
        let stack = try TestStack(model: model)
        let recipe = Recipe(context: stack.context)
        recipe.title = "Soup"
        // Inserted by name, the entity makes objects of the class too; `Step` has no class here.
        let other = NSEntityDescription.insertNewObject(forEntityName: "Recipe", into: stack.context)
        #expect(other is Recipe)
        let step = NSEntityDescription.insertNewObject(forEntityName: "Step", into: stack.context)
        #expect(type(of: step) == NSManagedObject.self)
        #expect((recipe.value(forKey: "servings") as? NSNumber)?.int64Value == 4)
        try stack.context.save()

        let fetched = try stack.reopen().fetch("Recipe") { $0.sortDescriptors = [NSSortDescriptor(key: "title", ascending: true)] }
        #expect(fetched.count == 2)
        #expect(fetched.allSatisfy { $0 is Recipe })
        #expect((fetched.last as? Recipe)?.title == "Soup")
        #expect(Recipe.entity().name == "Recipe")
    }

    @Test func classNamesThatNameNoSwiftClassFallBackToNSManagedObject() throws {
        for name in [".", "..Recipe", "Recipe.", "1Recipe", "My Recipe", "Recipe<Int>", "Recipe; DROP TABLE Z_METADATA"] {
            #expect(ManagedObjectClassRegistry.resolve(name) == NSManagedObject.self, "\(name)")
        }
        ManagedObjectClassRegistry.register(Recipe.self)
        #expect(ManagedObjectClassRegistry.resolve(".Recipe") == Recipe.self)
        #expect(ManagedObjectClassRegistry.resolve(String(reflecting: Recipe.self)) == Recipe.self)
    }
}
