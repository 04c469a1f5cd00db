import Foundation
import Testing
@testable import CoreData
import TestSupport

/// A controller's `cacheName`: the section information written at the fetch, kept current while
/// the controller tracks changes, replaced for another request, and deleted by name or all at once.
@Suite("NSFetchedResultsController's cache")
struct FetchedResultsCacheTests {
    private func controller(_ stack: TestStack, name: String, folder: URL, predicate: NSPredicate? = nil) -> NSFetchedResultsController<NSManagedObject> {
        let request = NSFetchRequest<NSManagedObject>(entityName: "Car")
        request.sortDescriptors = [NSSortDescriptor(key: "year", ascending: true), NSSortDescriptor(key: "name", ascending: true)]
        request.predicate = predicate
        let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: stack.context,
                                                    sectionNameKeyPath: "year", cacheName: name)
        controller.core.cache = FetchedResultsCache(folder: folder)
        return controller
    }

    private func sections(_ entry: FetchedResultsCache.Entry?) -> [String] {
        (entry?.sections ?? []).map { "\($0.name):\($0.count)" }
    }

    @Test func theFetchWritesTheSectionsAndTrackingKeepsThemCurrent() throws {
        let stack = try TestStack()
        let folder = try TemporaryFolder()
        for (name, year) in [("a", 2000), ("b", 2000), ("c", 2001)] { stack.insert("Car", ["name": name, "year": year]) }
        try stack.context.save()
        let cache = FetchedResultsCache(folder: folder.url)
        let controller = controller(stack, name: "Cars/2000s", folder: folder.url)
        try controller.performFetch()
        #expect(sections(cache.read("Cars/2000s")) == ["2000:2", "2001:1"])
        #expect(cache.url("Cars/2000s").lastPathComponent == "Cars%2F2000s.plist", "any name is a file name")

        let recorder = FetchedResultsRecorder()
        controller.delegate = recorder
        stack.insert("Car", ["name": "d", "year": 2002])
        stack.context.processPendingChanges()
        #expect(sections(cache.read("Cars/2000s")) == ["2000:2", "2001:1", "2002:1"])
    }

    @Test func aCacheOfAnotherRequestIsReplacedAtTheFetch() throws {
        let stack = try TestStack()
        let folder = try TemporaryFolder()
        for (name, year) in [("a", 2000), ("b", 2001)] { stack.insert("Car", ["name": name, "year": year]) }
        try stack.context.save()
        let cache = FetchedResultsCache(folder: folder.url)
        try controller(stack, name: "Cars", folder: folder.url).performFetch()
        let first = try #require(cache.read("Cars"))
        let other = controller(stack, name: "Cars", folder: folder.url, predicate: NSPredicate(format: "year > 2000"))
        try other.performFetch()
        let second = try #require(cache.read("Cars"))
        #expect(second.request != first.request && sections(second) == ["2001:1"])
        #expect(other.sections?.map(\.name) == ["2001"], "the controller's results are its own request's")
    }

    @Test func deleteCacheRemovesOneByNameOrAllForNil() throws {
        let folder = try TemporaryFolder()
        let cache = FetchedResultsCache(folder: folder.url)
        let entry = FetchedResultsCache.Entry(request: "r", sections: [.init(name: "", count: 1)])
        for name in ["one", "two", "three"] { cache.update(name, to: entry) }
        cache.delete("two")
        #expect(cache.read("one") == entry && cache.read("two") == nil && cache.read("three") == entry)
        cache.delete(nil)
        #expect(cache.read("one") == nil && cache.read("three") == nil)
        cache.delete(nil) // nothing left: nothing happens
        // A file that is not a cache reads as none, and the next fetch replaces it.
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        try Data("not a property list".utf8).write(to: cache.url("bad"))
        #expect(cache.read("bad") == nil)
        cache.update("bad", to: entry)
        #expect(cache.read("bad") == entry)
    }

    @Test func theStandardFolderIsInTheXDGCacheFolder() {
        let folder = FetchedResultsCache.standard.folder.path
        #expect(folder.hasSuffix("/\(NSPersistentContainer.applicationName)/CoreData/SectionInfoCaches"))
    }
}
