import Foundation
import Testing
@testable import CoreData

/// The expected values published with the shared fixtures, read from their README at run time.
struct SharedVersionVectors {
    /// `versionChecksum` by model folder name (without `.xcdatamodel`).
    var checksums: [String: String] = [:]
    /// Per-entity `versionHash` (base64) of the v12 user model.
    var entityHashes: [String: String] = [:]

    static func load() throws -> SharedVersionVectors {
        let readme = try String(contentsOf: ModelTestSupport.sharedVersionHashes.appendingPathComponent("README.md"), encoding: .utf8)
        var vectors = SharedVersionVectors()
        for line in readme.split(separator: "\n") where line.hasPrefix("|") {
            let cells = line.split(separator: "|").map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            }.filter { !$0.isEmpty }
            guard cells.count >= 2, let last = cells.last, last.count == 44, last.hasSuffix("=") else { continue }
            if cells[0].hasSuffix(".xcdatamodel") {
                vectors.checksums[String(cells[0].dropLast(".xcdatamodel".count))] = last
            } else if cells.count == 2 {
                vectors.entityHashes[cells[0]] = last
            }
        }
        return vectors
    }

    static func model(_ name: String) throws -> NSManagedObjectModel {
        try NSManagedObjectModel(validatingContentsOf: ModelTestSupport.sharedVersionHashes.appendingPathComponent("\(name).xcdatamodel"))
    }
}

@Suite("Version hashes")
struct VersionHashTests {
    // MARK: Xcode's own values

    @Test(.enabled(if: ModelTestSupport.sharedVersionHashesAvailable, ModelTestSupport.sharedFixturesMissing))
    func sharedFixtureVersionChecksums() throws {
        let vectors = try SharedVersionVectors.load()
        #expect(vectors.checksums.count == 2)
        for (name, expected) in vectors.checksums.sorted(by: { $0.key < $1.key }) {
            let model = try SharedVersionVectors.model(name)
            #expect(model.versionChecksum == expected, "versionChecksum of \(name)")
        }
    }

    @Test(.enabled(if: ModelTestSupport.sharedVersionHashesAvailable, ModelTestSupport.sharedFixturesMissing))
    func sharedFixtureEntityVersionHashes() throws {
        let vectors = try SharedVersionVectors.load()
        #expect(vectors.entityHashes.count == 7)
        let model = try SharedVersionVectors.model("LegacyEcosystemUserDataModel_v12")
        let hashes = model.entityVersionHashesByName
        #expect(hashes.count == vectors.entityHashes.count)
        for (entity, expected) in vectors.entityHashes.sorted(by: { $0.key < $1.key }) {
            #expect(hashes[entity]?.base64EncodedString() == expected, "versionHash of \(entity)")
        }
    }

    /// The same entities built in code hash like the ones read from Xcode's XML.
    @Test(.enabled(if: ModelTestSupport.sharedVersionHashesAvailable, ModelTestSupport.sharedFixturesMissing))
    func codeBuiltEntitiesMatchXcodeModel() throws {
        let xcode = try SharedVersionVectors.model("LegacyEcosystemUserDataModel_v12").entityVersionHashesByName

        let accountInfo = NSEntityDescription()
        accountInfo.name = "CDAccountInfo"
        accountInfo.properties = [Self.attribute("data", .binaryDataAttributeType), Self.attribute("identifier", .stringAttributeType)]

        let node = NSEntityDescription()
        node.name = "CDCustomChainNode"
        node.properties = [Self.attribute("name", .stringAttributeType), Self.attribute("url", .URIAttributeType, optional: false)]

        let settings = NSEntityDescription()
        settings.name = "CDChainSettings"
        let autobalanced = Self.attribute("autobalanced", .booleanAttributeType, optional: false)
        autobalanced.defaultValue = true
        settings.properties = [Self.attribute("issueMuted", .booleanAttributeType, optional: false), autobalanced,
                               Self.attribute("chainId", .stringAttributeType, optional: false)]

        // A to-one relationship known only by its destination's and inverse's names, as before freezing.
        let visibility = NSEntityDescription()
        visibility.name = "CDAssetVisibility"
        let wallet = NSRelationshipDescription()
        wallet.name = "wallet"
        wallet.isOptional = false
        wallet.maxCount = 1
        wallet.destinationEntityName = "CDMetaAccount"
        wallet.inverseName = "assetsVisibility"
        visibility.properties = [Self.attribute("assetId", .stringAttributeType), Self.attribute("hidden", .booleanAttributeType), wallet]

        for entity in [accountInfo, node, settings, visibility] {
            #expect(entity.versionHash == xcode[entity.name!], "\(entity.name!)")
        }
    }

    // MARK: The layout

    static func attribute(_ name: String, _ type: NSAttributeType, optional: Bool = true) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = optional
        return attribute
    }

    static func bytes(_ parts: Any...) -> Data {
        var data = Data()
        for part in parts {
            switch part {
            case let s as String: data.append(contentsOf: Array(s.utf8))
            case let d as Data: data.append(d)
            case let b as [UInt8]: data.append(contentsOf: b)
            case let b as [Int]: data.append(contentsOf: b.map { UInt8($0) })
            default: Issue.record("unexpected part \(part)")
            }
        }
        return data
    }

    @Test func propertyAndAttributeHashLayout() {
        let a = Self.attribute("title", .stringAttributeType)
        a.isTransient = true
        a.isReadOnly = true
        a.versionHashModifier = "v2"
        let property = SHA2.sha256(Self.bytes("title", [0x07, 0x00], "v2"))
        #expect(VersionHash.propertyHash(a) == property)
        // 700 = 0x2BC, as a little-endian Int32.
        #expect(VersionHash.attributeHash(a) == SHA2.sha256(Self.bytes(property, [0xBC, 0x02, 0x00, 0x00])))
        #expect(a.versionHash == VersionHash.attributeHash(a))

        a.allowsExternalBinaryDataStorage = true
        a.preservesValueInHistoryOnDeletion = true
        #expect(VersionHash.attributeHash(a) == SHA2.sha256(Self.bytes(property, [0xBC, 0x02, 0x00, 0x00, 0x01, 0x01])))
    }

    @Test func relationshipHashLayout() {
        let r = NSRelationshipDescription()
        r.name = "pages"
        r.isOptional = false
        r.destinationEntityName = "Page"
        r.inverseName = "book"
        r.maxCount = 0
        r.minCount = 2
        r.isOrdered = true
        r.deleteRule = .cascadeDeleteRule
        let property = SHA2.sha256(Self.bytes("pages", [0x00, 0x00]))
        #expect(VersionHash.relationshipHash(r) == SHA2.sha256(Self.bytes(property, "Page", "book", [0, 0, 0, 0], [2, 0, 0, 0], [1, 0])))
        #expect(r.versionHash == VersionHash.relationshipHash(r))

        // A one-way to-one: no inverse, maxCount 1, not ordered.
        let one = NSRelationshipDescription()
        one.name = "cover"
        one.destinationEntityName = "Image"
        one.maxCount = 1
        #expect(VersionHash.relationshipHash(one) == SHA2.sha256(Self.bytes(SHA2.sha256(Self.bytes("cover", [0x01, 0x00])), "Image", [1, 0, 0, 0], [0, 0, 0, 0])))
    }

    @Test func entityHashLayout() {
        let parent = NSEntityDescription()
        parent.name = "Item"
        parent.isAbstract = true
        let title = Self.attribute("title", .stringAttributeType)
        parent.properties = [title]

        let child = NSEntityDescription()
        child.name = "Book"
        child.versionHashModifier = "m"
        let pages = Self.attribute("pages", .integer16AttributeType)
        let cache = Self.attribute("cache", .stringAttributeType)
        cache.isTransient = true
        child.properties = [pages, cache]
        child.uniquenessConstraints = [["title", "pages"], ["pages"]]
        parent.subentities = [child]

        let parentHash = SHA2.sha256(Self.bytes("Item", [1], title.versionHash))
        #expect(parent.versionHash == parentHash)
        // Inherited and own non-transient properties in name order (pages < title), then the modifier,
        // then the constraints joined with "." in ascending order.
        let expected = SHA2.sha256(Self.bytes("Book", [0], parentHash, pages.versionHash, title.versionHash, "m", "pages", "title.pages"))
        #expect(VersionHash.entityHash(child) == expected)
        #expect(child.versionHash == expected)
    }

    @Test func checksumAndDigestLayout() {
        let model = Self.makeModel()
        let sorted = model.entities.sorted { $0.name! < $1.name! }
        let concatenated = sorted.reduce(into: Data()) { $0.append($1.versionHash) }
        #expect(model.versionChecksum == SHA2.sha256(concatenated).base64EncodedString())
        #expect(VersionHash.versionChecksum(model) == model.versionChecksum)

        let pairs = sorted.reduce(into: Data()) { data, entity in
            data.append(contentsOf: Array(entity.name!.utf8))
            data.append(entity.versionHash)
        }
        let digest = VersionHash.hashesDigest(model)
        #expect(digest == SHA2.sha512(pairs).base64EncodedString())
        #expect(Data(base64Encoded: digest)?.count == 64)
    }

    @Test func relationshipHashIsTheSameBeforeAndAfterResolution() {
        let model = Self.makeModel()
        let person = model.entitiesByName["Person"]!
        let pet = model.entitiesByName["Pet"]!
        let pets = person.relationshipsByName["pets"]!
        let resolved = pets.versionHash
        let byName = NSRelationshipDescription()
        byName.name = "pets"
        byName.maxCount = 0
        byName.isOrdered = true
        byName.destinationEntityName = "Pet"
        byName.inverseName = "owner"
        #expect(byName.versionHash == resolved)
        #expect(pet.relationshipsByName["owner"]!.inverseRelationship === pets)
    }

    @Test func selfInverseRelationshipHashesLikeOneWithoutInverse() {
        let entity = NSEntityDescription()
        entity.name = "Person"
        let friends = NSRelationshipDescription()
        friends.name = "friends"
        friends.maxCount = 0
        entity.properties = [friends]
        friends.destinationEntity = entity
        let withoutInverse = friends.versionHash
        friends.inverseRelationship = friends
        #expect(friends.versionHash == withoutInverse)

        // Known only by names, pointing back at its own entity under its own name.
        let byName = NSRelationshipDescription()
        byName.name = "friends"
        byName.maxCount = 0
        byName.destinationEntityName = "Person"
        byName.inverseName = "friends"
        let other = NSEntityDescription()
        other.name = "Person"
        other.properties = [byName]
        #expect(byName.versionHash == withoutInverse)
    }

    @Test func constraintsHashByNameInAscendingOrder() {
        func hash(_ constraints: [[Any]]) -> Data {
            let entity = NSEntityDescription()
            entity.name = "E"
            let a = Self.attribute("a", .stringAttributeType)
            let b = Self.attribute("b", .stringAttributeType)
            entity.properties = [a, b]
            entity.uniquenessConstraints = constraints
            return entity.versionHash
        }
        #expect(hash([["a"], ["b"]]) == hash([["b"], ["a"]]))
        #expect(hash([["a", "b"]]) != hash([["a"], ["b"]]))
        #expect(hash([["a"]]) != hash([]))
        let entity = NSEntityDescription()
        entity.name = "E"
        let a = Self.attribute("a", .stringAttributeType)
        let b = Self.attribute("b", .stringAttributeType)
        entity.properties = [a, b]
        entity.uniquenessConstraints = [[a, b]]
        #expect(entity.versionHash == hash([["a", "b"]]))
    }

    // MARK: What is and is not hashed

    /// A small model: Animal (abstract) ← Pet, Person with a photo and ordered pets.
    final class Parts {
        let model = NSManagedObjectModel()
        let animal = NSEntityDescription()
        let pet = NSEntityDescription()
        let person = NSEntityDescription()
        let animalName = VersionHashTests.attribute("name", .stringAttributeType, optional: false)
        let personName = VersionHashTests.attribute("name", .stringAttributeType, optional: false)
        let photo = VersionHashTests.attribute("photo", .binaryDataAttributeType)
        let age = VersionHashTests.attribute("age", .integer16AttributeType)
        let pets = NSRelationshipDescription()
        let owner = NSRelationshipDescription()
        var extra: [NSPropertyDescription] = []

        init() {
            animal.name = "Animal"
            animal.isAbstract = true
            pet.name = "Pet"
            person.name = "Person"
            pets.name = "pets"
            pets.maxCount = 0
            pets.isOrdered = true
            pets.deleteRule = .cascadeDeleteRule
            owner.name = "owner"
            owner.maxCount = 1
            owner.deleteRule = .nullifyDeleteRule
            person.uniquenessConstraints = [["name"]]
        }

        func assemble() {
            animal.properties = [animalName]
            pet.properties = [owner]
            person.properties = [personName, photo, age, pets] + extra
            animal.subentities = [pet]
            pets.destinationEntity = pet
            owner.destinationEntity = person
            pets.inverseRelationship = owner
            owner.inverseRelationship = pets
            model.entities = [animal, pet, person]
        }
    }

    static func makeModel(_ tweak: (Parts) -> Void = { _ in }) -> NSManagedObjectModel {
        let parts = Parts()
        parts.assemble()
        tweak(parts)
        return parts.model
    }

    struct Tweak: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let apply: @Sendable (Parts) -> Void
        init(_ description: String, _ apply: @escaping @Sendable (Parts) -> Void) {
            self.testDescription = description
            self.apply = apply
        }
    }

    static let hashedChanges: [Tweak] = [
        Tweak("attribute name") { $0.age.name = "years" },
        Tweak("attribute optional") { $0.personName.isOptional = true },
        Tweak("attribute becomes transient") { $0.photo.isTransient = true },
        Tweak("attribute read-only") { $0.age.isReadOnly = true },
        Tweak("attribute version hash modifier") { $0.age.versionHashModifier = "x" },
        Tweak("attribute type") { $0.age.attributeType = .integer32AttributeType },
        Tweak("external binary storage") { $0.photo.allowsExternalBinaryDataStorage = true },
        Tweak("preserve value in history") { $0.photo.preservesValueInHistoryOnDeletion = true },
        Tweak("relationship optional") { $0.owner.isOptional = false },
        Tweak("relationship destination") { $0.pets.destinationEntity = $0.animal },
        Tweak("relationship inverse removed") { $0.pets.inverseRelationship = nil },
        Tweak("relationship max count") { $0.pets.maxCount = 10 },
        Tweak("relationship min count") { $0.pets.minCount = 1 },
        Tweak("relationship ordered") { $0.pets.isOrdered = false },
        Tweak("relationship version hash modifier") { $0.owner.versionHashModifier = "x" },
        Tweak("entity name") { $0.person.name = "Human" },
        Tweak("entity abstract") { $0.pet.isAbstract = true },
        Tweak("entity version hash modifier") { $0.person.versionHashModifier = "x" },
        Tweak("uniqueness constraint") { $0.person.uniquenessConstraints = [["name", "age"]] },
        Tweak("uniqueness constraint removed") { $0.person.uniquenessConstraints = [] },
        Tweak("superentity's hash") { $0.animalName.isOptional = true },
        Tweak("superentity removed") { $0.animal.subentities = [] },
    ]

    @Test(arguments: hashedChanges)
    func hashedDetailChangesTheHash(_ tweak: Tweak) {
        let baseline = Self.makeModel()
        let changed = Self.makeModel(tweak.apply)
        #expect(changed.versionChecksum != baseline.versionChecksum)
        #expect(VersionHash.hashesDigest(changed) != VersionHash.hashesDigest(baseline))
    }

    static let unhashedChanges: [Tweak] = [
        Tweak("delete rule") { $0.pets.deleteRule = .denyDeleteRule; $0.owner.deleteRule = .noActionDeleteRule },
        Tweak("user info") { $0.person.userInfo = ["a": "b"]; $0.age.userInfo = ["c": "d"] },
        Tweak("renaming identifier") { $0.age.renamingIdentifier = "oldAge"; $0.person.renamingIdentifier = "Human" },
        Tweak("indexed") { $0.age.isIndexed = true; $0.age.isIndexedBySpotlight = true },
        Tweak("default value") { $0.age.defaultValue = 3 },
        Tweak("value transformer and class") { $0.photo.valueTransformerName = "T"; $0.photo.attributeValueClassName = "C" },
        Tweak("validation rules") {
            $0.age.minimum = 1
            $0.age.maximum = 9
            $0.personName.regularExpression = "[a-z]+"
            $0.age.setValidationPredicates([NSPredicate(value: true)], withValidationWarnings: ["w"])
        },
        Tweak("class name") { $0.person.managedObjectClassName = "Person" },
        Tweak("fetch index") { $0.person.indexes = [NSFetchIndexDescription(name: "byAge", elements: nil)] },
        Tweak("cloud encryption and scalar type") { $0.photo.allowsCloudEncryption = true; $0.age.usesScalarValueType = true },
        Tweak("configuration") { $0.model.setEntities([$0.person], forConfigurationName: "People") },
        Tweak("transient attribute added") {
            let cache = VersionHashTests.attribute("cache", .stringAttributeType)
            cache.isTransient = true
            $0.person.properties = $0.person.properties + [cache]
        },
    ]

    @Test(arguments: unhashedChanges)
    func unhashedDetailKeepsTheHash(_ tweak: Tweak) {
        let baseline = Self.makeModel()
        let changed = Self.makeModel(tweak.apply)
        #expect(changed.versionChecksum == baseline.versionChecksum)
        #expect(changed.entityVersionHashesByName == baseline.entityVersionHashesByName)
    }
}

@Suite("Shared fixtures in CI")
struct SharedFixturesInCITests {
    /// CI runs with `../shared` beside the clone: there the version-hash vectors must not be skipped.
    @Test func versionHashFixturesArePresentInCI() {
        guard ProcessInfo.processInfo.environment["CI"] == "true" else { return }
        #expect(ModelTestSupport.sharedVersionHashesAvailable, "CI must have ../shared/fixtures/version-hashes beside the clone")
    }
}
