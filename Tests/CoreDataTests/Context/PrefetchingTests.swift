import Foundation
import Testing
@testable import CoreData

@Suite("relationshipKeyPathsForPrefetching")
struct PrefetchingTests {
    /// Four people with three cars each, every car with two of three tags; a playlist of five
    /// songs. Read through a second stack (no cached rows).
    private func seeded() throws -> TestStack {
        let stack = try TestStack()
        let tags = (0..<3).map { stack.insert("Tag", ["label": "t\($0)"]) }
        for p in 0..<4 {
            let person = stack.insert("Person", ["name": "p\(p)"])
            for c in 0..<3 {
                let car = stack.insert("Car", ["name": "p\(p)c\(c)"])
                car.setValue(person, forKey: "owner")
                car.setValue(Set([tags[c], tags[(c + 1) % 3]]), forKey: "tags")
            }
        }
        let playlist = stack.insert("Playlist", ["title": "mix"])
        playlist.setValue(NSOrderedSet(array: (0..<5).map { stack.insert("Song", ["title": "s\(4 - $0)"]) }), forKey: "songs")
        try stack.context.save()
        return stack
    }

    private func touchCarsAndTags(_ people: [NSManagedObject]) -> [String] {
        people.flatMap { person in
            (person.value(forKey: "cars") as? Set<NSManagedObject> ?? []).map { car in
                let labels = (car.value(forKey: "tags") as? Set<NSManagedObject> ?? []).compactMap { $0.value(forKey: "label") as? String }
                return "\(car.value(forKey: "name") ?? "")[\(labels.sorted().joined(separator: ","))]"
            }.sorted()
        }
    }

    @Test func nestedToManyAndManyToManyPathsTakeOneQueryEach() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let before = stack.readStatements
        let people = try stack.fetch("Person") {
            $0.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            $0.relationshipKeyPathsForPrefetching = ["cars", "cars.tags"]
        }
        #expect(stack.readStatements == before + 3)  // people, their cars, the cars' tags
        let touched = touchCarsAndTags(people)
        #expect(stack.readStatements == before + 3)  // touching them costs nothing more
        #expect(touched.count == 12)
        #expect(touched.first == "p0c0[t0,t1]")
        #expect(touched.last == "p3c2[t0,t2]")
    }

    @Test func withoutPrefetchingTouchingRelationshipsQueries() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let before = stack.readStatements
        let people = try stack.fetch("Person")
        let touched = touchCarsAndTags(people)
        #expect(touched.count == 12)
        #expect(stack.readStatements > before + 3)
    }

    @Test func toOnePathsLoadTheDestinationsRows() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let before = stack.readStatements
        let cars = try stack.fetch("Car") { $0.relationshipKeyPathsForPrefetching = ["owner", "owner.cars"] }
        #expect(stack.readStatements == before + 3)
        let owners = cars.compactMap { ($0.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String }
        let siblings = cars.map { (($0.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "cars") as? Set<NSManagedObject>)?.count }
        #expect(stack.readStatements == before + 3)
        #expect(owners.count == 12 && Set(owners) == ["p0", "p1", "p2", "p3"])
        #expect(siblings.allSatisfy { $0 == 3 })
    }

    @Test func orderedToManyKeepsItsOrder() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let before = stack.readStatements
        let playlist = try stack.fetch("Playlist") { $0.relationshipKeyPathsForPrefetching = ["songs"] }[0]
        let titles = (playlist.value(forKey: "songs") as? NSOrderedSet)?.array.compactMap { ($0 as? NSManagedObject)?.value(forKey: "title") as? String }
        #expect(titles == ["s4", "s3", "s2", "s1", "s0"])
        #expect(stack.readStatements == before + 2)
    }

    @Test func prefetchingWithABatchedFetchPrefetchesEachBatch() throws {
        let seed = try seeded()
        defer { withExtendedLifetime(seed) {} }
        let stack = try seed.reopen()
        let before = stack.readStatements
        let cars = try stack.fetch("Car") { $0.fetchBatchSize = 6; $0.relationshipKeyPathsForPrefetching = ["owner"] }
        #expect(stack.readStatements == before + 1)
        #expect((cars[0].value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "p0")
        #expect((cars[5].value(forKey: "owner") as? NSManagedObject)?.value(forKey: "name") as? String == "p1")
        #expect(stack.readStatements == before + 3)   // the batch, then its owners
    }

    @Test func prefetchingOnTheInMemoryStore() throws {
        let stack = try TestStack(inMemory: true)
        let person = stack.insert("Person", ["name": "p"])
        for c in 0..<3 { stack.insert("Car", ["name": "c\(c)"]).setValue(person, forKey: "owner") }
        try stack.context.save()
        stack.context.reset()
        let people = try stack.fetch("Person") { $0.relationshipKeyPathsForPrefetching = ["cars"] }
        let cars = try #require(people[0]._relations[people[0].layout.nameTable.index(of: "cars")!])
        guard case .toMany(let list) = cars else { Issue.record("cars were not prefetched"); return }
        #expect(list.objects.allSatisfy { $0._hasData })
        #expect(Set(list.objects.compactMap { $0.value(forKey: "name") as? String }) == ["c0", "c1", "c2"])
    }

    @Test func aKeyPathThatIsNotARelationshipThrows() throws {
        let stack = try seeded()
        #expect(throws: NSError.self) { try stack.fetch("Person") { $0.relationshipKeyPathsForPrefetching = ["name"] } }
        #expect(throws: NSError.self) { try stack.fetch("Person") { $0.relationshipKeyPathsForPrefetching = ["cars.nope"] } }
    }
}
