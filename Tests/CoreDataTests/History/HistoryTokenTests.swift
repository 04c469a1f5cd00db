import Foundation
import Testing
@testable import CoreData

/// `NSPersistentHistoryToken` archives as Apple's does.
@Suite struct HistoryTokenTests {
    @Test func aTokenArchivesUnderApplesClassNameAndKeyAndComesBack() throws {
        let token = NSPersistentHistoryToken(storeTokens: ["4A3B1C2D-0000-0000-0000-000000000001": 42])
        let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        let objects = try #require(plist["$objects"] as? [Any])
        // Apple's unarchiver has no CoreData.NSPersistentHistoryToken: it takes the hint, its own class.
        let tokenClass = try #require(objects.compactMap { $0 as? [String: Any] }.first { ($0["$classname"] as? String)?.hasSuffix("NSPersistentHistoryToken") == true })
        #expect(tokenClass["$classhints"] as? [String] == ["_NSPersistentHistoryToken"])
        #expect(objects.contains { ($0 as? [String: Any])?["NSPersistentHistoryTokenDictionary"] != nil })
        let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: data))
        #expect(back == token)
        #expect(back.storeTokens == ["4A3B1C2D-0000-0000-0000-000000000001": 42])
        #expect(back.description == "<NSPersistentHistoryToken - 4A3B1C2D-0000-0000-0000-000000000001: 42>")
    }

    /// An archive shaped as Apple's framework writes one, under either class name.
    @Test(arguments: ["_NSPersistentHistoryToken", "NSPersistentHistoryToken"])
    func anAppleArchiveReads(className: String) throws {
        NSPersistentHistoryToken.registerArchiveNames()
        let archive = BinaryPropertyListWriter.data(.dictionary([
            ("$archiver", .string("NSKeyedArchiver")),
            ("$version", .int(100000)),
            ("$top", .dictionary([("root", .uid(1))])),
            ("$objects", .array([
                .string("$null"),
                .dictionary([("NSPersistentHistoryTokenDictionary", .uid(2)), ("$class", .uid(6))]),
                .dictionary([("NS.keys", .array([.uid(3)])), ("NS.objects", .array([.uid(4)])), ("$class", .uid(5))]),
                .string("STORE-UUID"),
                .int(17),
                .dictionary([("$classname", .string("NSDictionary")), ("$classes", .array([.string("NSDictionary"), .string("NSObject")]))]),
                .dictionary([("$classname", .string(className)),
                             ("$classes", .array([.string(className), .string("NSPersistentHistoryToken"), .string("NSObject")]))]),
            ])),
        ]))
        let token = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: archive))
        #expect(token.storeTokens == ["STORE-UUID": 17])
    }
}

/// `compareToken(_:)` orders tokens of the same stores and refuses others (134501); `compare(_:)`
/// traps, as Apple's raises.
@Suite struct HistoryTokenComparisonTests {
    @Test func tokensOfTheSameStoresCompareByTheirTransactions() throws {
        let early = NSPersistentHistoryToken(storeTokens: ["A": 3, "B": 7])
        let later = NSPersistentHistoryToken(storeTokens: ["A": 5, "B": 7])
        #expect(try early.compareToken(later) == .orderedAscending)
        #expect(try later.compareToken(early) == .orderedDescending)
        #expect(try early.compareToken(NSPersistentHistoryToken(storeTokens: ["B": 7, "A": 3])) == .orderedSame)
        // The first store (by identifier) whose numbers differ decides.
        #expect(try NSPersistentHistoryToken(storeTokens: ["A": 1, "B": 9]).compareToken(NSPersistentHistoryToken(storeTokens: ["A": 2, "B": 0])) == .orderedAscending)
    }

    @Test func tokensOfOtherStoresThrow134501() throws {
        let token = NSPersistentHistoryToken(storeTokens: ["A": 3])
        for other in [NSPersistentHistoryToken(storeTokens: ["B": 3]), NSPersistentHistoryToken(storeTokens: ["A": 3, "B": 1])] {
            let error = #expect(throws: NSError.self) { try token.compareToken(other) }
            #expect(error?.domain == NSCocoaErrorDomain && error?.code == 134501)
            #expect(error?.localizedDescription.hasPrefix("Tokens have different") == true)
        }
    }

    @Test func tokensOfAStoreCompareAsItsHistoryGoesOn() throws {
        let stack = try TestStack(model: HistoryTestModel.make(), options: HistoryTestModel.tracking)
        stack.insert("Folder", ["name": "a"])
        try stack.context.save()
        let first = try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        stack.insert("Folder", ["name": "b"])
        try stack.context.save()
        let second = try #require(stack.coordinator.currentPersistentHistoryToken(fromStores: nil))
        #expect(try first.compareToken(second) == .orderedAscending)
    }

    @Test func compareTraps() async {
        await #expect(processExitsWith: .failure) {
            let token = NSPersistentHistoryToken(storeTokens: ["A": 3])
            _ = token.compare(token)
        }
    }
}
