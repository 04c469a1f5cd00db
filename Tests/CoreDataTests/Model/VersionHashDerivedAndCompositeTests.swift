import Foundation
import Testing
@testable import CoreData
import TestSupport

/// Derived and composite attributes hash as Apple's framework hashes them (studied from its
/// `_versionHash:inStyle:`): a derived attribute by its derivation's format alone, a composite by
/// its leaves alone. Stores this package wrote with its earlier hashes still open, and are
/// given the current ones.
@Suite struct VersionHashDerivedAndCompositeTests {
    @Test func aDerivedAttributeHashesItsDerivationAsApplesSetterRewritesIt() throws {
        let model = try DerivedAttributeTests.blog()
        func hash(_ entity: String, _ name: String) -> Data? { model.entitiesByName[entity]?.attributesByName[name]?.versionHash }
        #expect(hash("Author", "postCount") == SHA2.sha256(Data("count:(posts)".utf8)))
        #expect(hash("Author", "totalWords") == SHA2.sha256(Data("sum:(posts.words)".utf8)))
        #expect(hash("Author", "searchName") == SHA2.sha256(Data("canonical:(name)".utf8)))
        #expect(hash("Post", "authorName") == SHA2.sha256(Data("author.name".utf8)))
        #expect(hash("Post", "modified") == SHA2.sha256(Data("now()".utf8)))
        // Name, type and flags are not part of it.
        let derived = NSDerivedAttributeDescription()
        derived.name = "other"
        derived.attributeType = .integer16AttributeType
        derived.isOptional = false
        derived.derivationExpression = NSExpression(format: "posts.@count")
        #expect(derived.versionHash == hash("Author", "postCount"))
    }

    @Test func aCompositeHashesItsLeavesInNameOrderAndNothingOfItsOwn() throws {
        let model = CompositeAttributeTests.model()
        let address = try #require(model.entitiesByName["Person"]?.attributesByName["address"] as? NSCompositeAttributeDescription)
        var leaves: [NSAttributeDescription] = []
        func collect(_ elements: [NSAttributeDescription]) {
            for element in elements {
                if let nested = element as? NSCompositeAttributeDescription { collect(nested.elements) } else { leaves.append(element) }
            }
        }
        collect(address.elements)
        #expect(leaves.count == 5)
        let expected = SHA2.sha256(leaves.sorted { $0.name < $1.name }.reduce(into: Data()) { $0.append($1.versionHash) })
        #expect(address.versionHash == expected)
    }

    /// A store recorded with the hashes this package gave derived and composite attributes
    /// before: it opens, and its metadata then holds the current hashes.
    @Test(arguments: ["derived", "composite"])
    func aStoreWithTheEarlierHashesOpensAndIsGivenTheCurrentOnes(_ kind: String) throws {
        let folder = try TemporaryFolder()
        let url = folder.url.appendingPathComponent("Earlier.sqlite")
        let model = kind == "derived" ? try DerivedAttributeTests.blog() : CompositeAttributeTests.model()
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        }
        var metadata = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        let earlier = model.entities.reduce(into: [String: Data]()) { $0[$1.name!] = VersionHash.entityHash($1, legacy: true) }
        #expect(earlier != model.entityVersionHashesByName)
        metadata[NSStoreModelVersionHashesKey] = earlier
        try NSPersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreOfType: NSSQLiteStoreType, at: url)
        #expect(model.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))

        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
        let rewritten = try NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: NSSQLiteStoreType, at: url)
        #expect(rewritten[NSStoreModelVersionHashesKey] as? [String: Data] == model.entityVersionHashesByName)
        #expect(rewritten[NSPersistentStoreModelVersionChecksumKey] as? String == model.versionChecksum)
        #expect(rewritten[NSStoreUUIDKey] as? String == metadata[NSStoreUUIDKey] as? String)

        // Another hash is still another model.
        var changed = metadata
        changed[NSStoreModelVersionHashesKey] = earlier.mapValues { _ in Data(repeating: 7, count: 32) }
        #expect(!model.isConfiguration(withName: nil, compatibleWithStoreMetadata: changed))
    }
}
