import Foundation
import Testing
@testable import CoreData

/// An object ID's URI names its store by identifier, in the URI's host. An identifier that cannot
/// be a host (set by hand, or read from a store another tool wrote) is percent-encoded, and the
/// URI still leads back to the ID, instead of stopping the process.
@Suite("Object ID URIs of stores with any identifier")
struct ObjectIDURIHostTests {
    @Test(arguments: ["my store/1", "\u{2}ABC", "Ümlaut store", "5F3A-OK"])
    func anyIdentifierMakesAURIThatLeadsBack(identifier: String) throws {
        let stack = try TestStack()
        let car = stack.insert("Car", ["name": "Named"])
        try stack.context.save()
        stack.coordinator.persistentStores[0].identifier = identifier
        let uri = car.objectID.uriRepresentation()
        #expect(uri.scheme == "x-coredata")
        #expect(stack.coordinator.managedObjectID(forURIRepresentation: uri) == car.objectID)
    }

    @Test func aStoreUUIDThatIsNoHostNameIsReadAndUsed() throws {
        let first = try TestStack()
        first.insert("Car", ["name": "Old"])
        try first.context.save()
        let stack = try first.rewritten(by: "UPDATE Z_METADATA SET Z_UUID = 'not a host/name'")
        try withExtendedLifetime(first) {
            let car = try #require(try stack.fetch("Car").first)
            let uri = car.objectID.uriRepresentation()
            #expect(stack.coordinator.managedObjectID(forURIRepresentation: uri) == car.objectID)
        }
    }
}
