import CoreData
import Foundation
import MagicalRecord
import Testing

/// A class no typed API has met before its first import: its entity names it by its bare name,
/// as Xcode writes `representedClassName`.
final class FreshlyImportedMember: NSManagedObject {}
/// A class whose entity (of its name) makes plain `NSManagedObject`s.
final class PlainlyImportedMember: NSManagedObject {}

/// Imports at the edges: a class Core Data has not met yet, a related object keyed by its
/// primary attribute's own name, data that is not a dictionary, 64-bit keys sent as strings.
@Suite struct MagicalDataImportEdgeTests {
    static func membersModel() -> NSManagedObjectModel {
        let member = NSEntityDescription()
        member.name = "Member"
        member.managedObjectClassName = "FreshlyImportedMember"
        member.userInfo = ["relatedByAttribute": "remoteID"]
        let remoteID = NSAttributeDescription(), name = NSAttributeDescription()
        remoteID.name = "remoteID"; remoteID.attributeType = .integer64AttributeType
        name.name = "name"; name.attributeType = .stringAttributeType
        member.properties = [remoteID, name]
        let model = NSManagedObjectModel()
        model.entities = [member]
        return model
    }

    /// The store's record is found and updated, not inserted again: MagicalRecord's untyped
    /// fetches make objects of the class once the class has been asked for its entity. (In a
    /// process of its own, where Core Data has met no class of this module yet.)
    @Test func anImportThroughAClassNotYetMetUpdatesTheStoresRecord() async throws {
        await #expect(processExitsWith: .success) {
            let stack = try MagicalTestStack(model: MagicalDataImportEdgeTests.membersModel())
            stack.insert("Member", ["remoteID": 1, "name": "Ada"])
            try stack.save()
            let other = stack.newContext()
            let member = FreshlyImportedMember.mr_import(from: ["remoteID": 1, "name": "Ada L."], in: other)
            let count = FreshlyImportedMember.mr_countOfEntities(with: other)
            let found = FreshlyImportedMember.mr_findFirst(byAttribute: "remoteID", withValue: 1, in: other)
            let name = other.performAndWait { found?.value(forKey: "name") as? String }
            guard count == 1, other.performAndWait({ !member.isInserted }), name == "Ada L." else { exit(1) }
        }
    }

    /// An entity whose objects are plain `NSManagedObject`s: the array form updates the record
    /// the store has (no second one).
    @Test func anImportThroughAClassOfAnotherEntityClassUpdatesTheRecord() throws {
        let model = Self.membersModel()
        model.entities[0].name = "PlainlyImportedMember"
        model.entities[0].managedObjectClassName = "NSManagedObject"
        let stack = try MagicalTestStack(model: model)
        stack.insert("PlainlyImportedMember", ["remoteID": 1, "name": "Ada"])
        try stack.save()
        let listed = PlainlyImportedMember.mr_import(from: [["remoteID": 1, "name": "Ada M."]], in: stack.context)
        #expect(stack.values(listed, "name") == ["Ada M."])
        try stack.save()
        let rows = try stack.run { try stack.context.fetch(NSFetchRequest<NSManagedObject>(entityName: "PlainlyImportedMember")) }
        #expect(stack.values(rows, "name") == ["Ada M."])
    }

    @Test func aRelatedDictionaryKeyedByThePrimaryAttributesOwnNameFindsTheObject() throws {
        let stack = try MagicalTestStack()
        stack.insert("Company", ["companyID": 7, "name": "Analytical Engines"])
        try stack.save()
        _ = Person.mr_import(from: ["personID": 1, "company": ["companyID": 7, "name": "AE"]], in: stack.context)
        #expect(Employer.mr_countOfEntities(with: stack.context) == 1)
        stack.run {
            let company = Person.mr_findFirst(in: stack.context)?.value(forKey: "employer") as? NSManagedObject
            #expect(company?.value(forKey: "companyID") as? Int64 == 7)
        }
    }

    @Test func dataThatIsNotADictionaryInsertsNothing() throws {
        let stack = try MagicalTestStack()
        let list = try JSONSerialization.jsonObject(with: Data(#"[{"personID": 1, "name": "A"}]"#.utf8))
        let single = Person.mr_import(from: list, in: stack.context)   // (the single form: `Any`)
        #expect(stack.run { single.managedObjectContext } == nil)
        let imported = Person.mr_import(from: [NSNull(), "text", ["personID": 2, "name": "B"], 3], in: stack.context)
        #expect(stack.values(imported, "name") == ["B"])
        #expect(Person.mr_countOfEntities(with: stack.context) == 1)
        try stack.save()
    }

    @Test func sixtyFourBitKeysSentAsStringsStayDistinct() throws {
        let stack = try MagicalTestStack()
        _ = Person.mr_import(from: ["personID": "9007199254740992", "name": "A"], in: stack.context)
        try stack.save()
        _ = Person.mr_import(from: ["personID": "9007199254740993", "name": "B"], in: stack.context)
        try stack.save()
        #expect(Person.mr_countOfEntities(with: stack.context) == 2)
        let b = Person.mr_findFirst(byAttribute: "personID", withValue: Int64(9_007_199_254_740_993), in: stack.context)
        #expect(stack.values(b.map { [$0] }, "name") == ["B"])
    }
}
