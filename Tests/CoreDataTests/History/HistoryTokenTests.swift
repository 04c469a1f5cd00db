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
