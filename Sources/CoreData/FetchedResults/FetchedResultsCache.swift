import Foundation

// The persistent cache of a fetched results controller's section information (Apple's
// `cacheName`): one property list per name in a private folder, holding what the request was
// (entity, predicate, sort descriptors, section key path, result type) and the sections it gave
// (names and counts). As Apple documents, a cache whose request does not match the controller's is
// replaced at the fetch, and a controller that tracks changes (a delegate) keeps its cache
// current. Computing the sections from the fetched objects is cheap here, so the cache is written,
// not read back for them.
//
// The folder: `$XDG_CACHE_HOME/<application>/CoreData/SectionInfoCaches/` (`~/.cache/…` when the
// variable is unset), Linux's counterpart of Apple's `Library/Caches/.CoreDataCaches/SectionInfoCaches/`.

internal struct FetchedResultsCache {
    /// What a cache file holds.
    struct Entry: Equatable {
        var request: String
        var sections: [Section]

        struct Section: Equatable {
            var name: String
            var count: Int
        }
    }

    let folder: URL

    /// The cache folder of this process.
    static var standard: FetchedResultsCache {
        FetchedResultsCache(folder: XDGDirectory.cache.url().appendingPathComponent(NSPersistentContainer.applicationName, isDirectory: true)
            .appendingPathComponent("CoreData/SectionInfoCaches", isDirectory: true))
    }

    /// The file of the cache named `name` (any string: its characters other than letters, digits,
    /// `-` and `_` are percent-encoded).
    func url(_ name: String) -> URL {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_")
        let file = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
        return folder.appendingPathComponent(file + ".plist", isDirectory: false)
    }

    /// The cache named `name`, if there is a readable one.
    func read(_ name: String) -> Entry? {
        guard let data = FileManager.default.contents(atPath: url(name).path),
              let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any], // an unreadable cache is no cache
              let request = plist["request"] as? String, let sections = plist["sections"] as? [[String: Any]] else { return nil }
        return Entry(request: request, sections: sections.map {
            Entry.Section(name: $0["name"] as? String ?? "", count: ($0["count"] as? NSNumber)?.intValue ?? 0)
        })
    }

    /// Writes the cache named `name`, unless it already holds `entry`. A cache that cannot be
    /// written is logged: the controller works without it.
    func update(_ name: String, to entry: Entry) {
        guard read(name) != entry else { return }
        let plist: [String: Any] = ["request": entry.request,
                                    "sections": entry.sections.map { ["name": $0.name, "count": $0.count] as [String: Any] }]
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
            try data.write(to: url(name), options: .atomic)
        } catch {
            CoreDataLog.error("NSFetchedResultsController could not write its cache '\(name)' at \(url(name).path): \(error)")
        }
    }

    /// Deletes the cache named `name`, or every cache for nil.
    func delete(_ name: String?) {
        let files: [URL]
        if let name {
            files = [url(name)]
        } else {
            files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [] // no folder: nothing to delete
        }
        for file in files where FileManager.default.fileExists(atPath: file.path) {
            do { try FileManager.default.removeItem(at: file) } catch {
                CoreDataLog.error("NSFetchedResultsController could not delete its cache at \(file.path): \(error)")
            }
        }
    }
}
