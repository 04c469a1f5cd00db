import Foundation
import Testing
@testable import CoreData

/// A many-to-many relationship that is its own inverse (Author.collaborators in the Library
/// fixture's second version): one join table with two distinct columns, both directions readable.
@Suite("Reflexive many-to-many relationships")
struct ReflexiveRelationshipTests {
    @Test func aRelationshipThatIsItsOwnInverseIsStoredAndReadBothWays() throws {
        let folder = ModelTestSupport.fixture("Library.xcdatamodeld/Library 2.xcdatamodel")
        let model = try NSManagedObjectModel(validatingContentsOf: folder)
        let stack = try TestStack(model: model)
        let ada = stack.insert("Author", ["name": "Ada"])
        let bob = stack.insert("Author", ["name": "Bob"])
        ada.mutableSetValue(forKey: "collaborators").add(bob)
        #expect((bob.value(forKey: "collaborators") as? Set<NSManagedObject>) == [ada], "the inverse is kept in step")
        try stack.context.save()

        let columns = try RawSQLite.query(stack.url.path, "SELECT name FROM pragma_table_info('Z_1COLLABORATORS')").compactMap { $0[0] }
        #expect(columns == ["Z_1COLLABORATORS", "Z_1COLLABORATORS1"])
        let reopened = try stack.reopen()
        for (name, other) in [("Ada", "Bob"), ("Bob", "Ada")] {
            let author = try reopened.fetch("Author") { $0.predicate = NSPredicate(format: "name == %@", name) }.first!
            let collaborators = (author.value(forKey: "collaborators") as? Set<NSManagedObject>) ?? []
            #expect(collaborators.compactMap { $0.value(forKey: "name") as? String } == [other])
        }
    }
}
