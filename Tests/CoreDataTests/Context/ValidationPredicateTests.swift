import Foundation
import Testing
@testable import CoreData

/// Attribute validation predicates (`NSPropertyDescription.validationPredicates`), evaluated with
/// the value as `SELF`, read the keys key-value coding gives values on Apple platforms: the ones
/// Xcode's model compiler writes for an attribute's bounds (`length >= 3`,
/// `timeIntervalSinceReferenceDate <= …`) and the ones written by hand.
@Suite("Validation predicates on values")
struct ValidationPredicateTests {
    /// A model of one entity, `Note`, whose attributes carry the given validation predicates.
    private func makeStack(_ rules: [String: [String]]) throws -> TestStack {
        let note = NSEntityDescription()
        note.name = "Note"
        note.properties = [attribute("title", .stringAttributeType), attribute("stamp", .dateAttributeType),
                           attribute("blob", .binaryDataAttributeType), attribute("count", .integer64AttributeType),
                           attribute("link", .URIAttributeType)]
        for (name, formats) in rules {
            note.propertiesByName[name]!.setValidationPredicates(formats.map { NSPredicate(format: $0) },
                                                                 withValidationWarnings: formats.map { "\(name) fails \($0)" })
        }
        let model = NSManagedObjectModel()
        model.entities = [note]
        return try TestStack(model: model)
    }

    private func saveError(_ stack: TestStack) -> NSError? {
        do { try stack.context.save(); return nil } catch { return error as NSError }
    }

    @Test func aStringsLengthIsItsUTF16Length() throws {
        let stack = try makeStack(["title": ["length >= 3", "SELF.length <= 5"]])
        let note = stack.insert("Note", ["title": "Al"])
        let error = try #require(saveError(stack))
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == NSManagedObjectValidationError)
        #expect(error.userInfo[NSValidationKeyErrorKey] as? String == "title")
        #expect((error.userInfo[NSValidationPredicateErrorKey] as? NSPredicate)?.formatText == "length >= 3")
        #expect(error.localizedDescription.contains("title fails length >= 3"))

        note.setValue("Ada", forKey: "title")
        try stack.context.save()
        note.setValue("Adaline", forKey: "title")
        #expect(saveError(stack)?.localizedDescription.contains("SELF.length <= 5") == true)
        note.setValue("😀😀", forKey: "title") // two characters, four UTF-16 units, as NSString counts
        try stack.context.save()
        note.setValue("😀😀😀", forKey: "title")
        #expect(saveError(stack) != nil)
    }

    @Test func xcodesBoundsPredicatesOnDatesDataNumbersAndURLs() throws {
        let stack = try makeStack([
            "stamp": ["timeIntervalSinceReferenceDate >= 0", "timeIntervalSince1970 <= 2000000000"],
            "blob": ["length <= 4"],
            "count": ["SELF >= 1", "intValue < 100", "stringValue != '42'"],
            "link": ["scheme == 'https'", "host ENDSWITH 'example.com'", "absoluteString.length < 40"],
        ])
        let note = stack.insert("Note", ["stamp": Date(timeIntervalSinceReferenceDate: -5)])
        #expect(saveError(stack)?.userInfo[NSValidationKeyErrorKey] as? String == "stamp")
        note.setValue(Date(timeIntervalSinceReferenceDate: 5), forKey: "stamp")
        note.setValue(Data([1, 2, 3, 4, 5]), forKey: "blob")
        #expect(saveError(stack)?.userInfo[NSValidationKeyErrorKey] as? String == "blob")
        note.setValue(Data([1, 2, 3, 4]), forKey: "blob")
        note.setValue(42, forKey: "count")
        #expect(saveError(stack)?.localizedDescription.contains("stringValue") == true)
        note.setValue(7, forKey: "count")
        note.setValue(URL(string: "http://example.com")!, forKey: "link")
        #expect(saveError(stack)?.localizedDescription.contains("scheme") == true)
        note.setValue(URL(string: "https://www.example.com/a")!, forKey: "link")
        try stack.context.save()
    }

    /// Fetches use the same keys, in SQL (the SQLite store) and in memory (the in-memory store).
    @Test(arguments: [false, true])
    func fetchesReadTheSameKeys(inMemory: Bool) throws {
        let note = NSEntityDescription()
        note.name = "Note"
        note.properties = [attribute("title", .stringAttributeType), attribute("blob", .binaryDataAttributeType),
                           attribute("stamp", .dateAttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [note]
        let stack = try TestStack(model: model, inMemory: inMemory)
        for (title, size) in [("Al", 1), ("Ada", 3), ("Zoë😀", 6), (nil, 0)] as [(String?, Int)] {
            let note = stack.insert("Note", ["blob": Data(count: size), "stamp": Date(timeIntervalSinceReferenceDate: Double(size))])
            if let title { note.setValue(title, forKey: "title") }
        }
        try stack.context.save()
        func titles(_ format: String) throws -> [String] {
            try stack.fetch("Note") { $0.predicate = NSPredicate(format: format) }.map { $0.value(forKey: "title") as? String ?? "nil" }.sorted()
        }
        #expect(try titles("title.length >= 3") == ["Ada", "Zoë😀"])
        #expect(try titles("title.length == 5") == ["Zoë😀"])
        #expect(try titles("title.uppercaseString == 'ADA'") == ["Ada"])
        #expect(try titles("blob.length > 2") == ["Ada", "Zoë😀"])
        #expect(try titles("stamp.timeIntervalSinceReferenceDate < 2") == ["Al", "nil"])
    }
}
