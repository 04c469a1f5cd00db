import Foundation

// The sorted list of objects an `NSFetchedResultsController` holds, cut into sections, and how
// a batch of changed objects moves through it.
//
// Every object is kept with its *placement*: the values of the sort keys (and the section name)
// it was placed by. An object's own values may already be new when the context reports it changed,
// so an object is found again by its placement, with a binary search, never by a scan or a
// re-fetch: a batch of k changed objects among n costs O(k log n) comparisons (plus the shift of
// the array's tail on each insertion or removal, a `memmove`), and O(s log n) to find the
// boundaries of the s sections again.

/// The sort key values and section name an object was placed by.
internal struct FetchedPlacement {
    /// Converted once, so that each of the binary searches' comparisons is cheap.
    var values: [SortKey.PreparedValue]
    var section: String
}

/// A section of the list: its name and where its objects are in the flat list.
internal struct FetchedSectionRange: Equatable {
    var name: String
    var start: Int
    var count: Int
    var end: Int { start + count }
}

/// One reported change of an object: the index paths are `[section, row]`.
internal struct FetchedObjectChange {
    var object: NSManagedObject
    var type: NSFetchedResultsChangeType
    var oldPath: IndexPath?
    var newPath: IndexPath?
    /// The object's index in the flat list before and after (for the collection difference).
    var oldOffset: Int?
    var newOffset: Int?
}

/// What a batch of changes did to the list, in Apple's conventions: deletions at their old index
/// paths, insertions at their new ones, moves from old to new, updates at both.
internal struct FetchedListChanges {
    var deletedSections: [(index: Int, name: String)] = []
    var insertedSections: [(index: Int, name: String)] = []
    var objects: [FetchedObjectChange] = []
    var isEmpty: Bool { deletedSections.isEmpty && insertedSections.isEmpty && objects.isEmpty }
}

internal struct FetchedResultsList {
    let sortKeys: [SortKey]
    /// The section key path's keys; nil for a controller without sections (one section, named "").
    let sectionPath: [String]?

    private(set) var objects: [NSManagedObject] = []
    private(set) var placements: [ObjectIdentifier: FetchedPlacement] = [:]
    private(set) var sections: [FetchedSectionRange] = []

    init(sortKeys: [SortKey], sectionPath: [String]?) {
        self.sortKeys = sortKeys
        self.sectionPath = sectionPath
    }

    // MARK: Placing objects

    /// The placement of an object by its current values.
    func placement(of object: NSManagedObject) -> FetchedPlacement {
        let values = sortKeys.map { key in key.prepared(key.path.isEmpty ? object : PredicateKeyValue.value(of: object, keyPath: key.path)) }
        return FetchedPlacement(values: values, section: sectionPath.map { Self.sectionName(of: PredicateKeyValue.value(of: object, keyPath: $0)) } ?? "")
    }

    /// A section key path's value as a section name, as Apple's: its description; "" for nil.
    static func sectionName(of value: Any?) -> String {
        switch value {
        case nil, is NSNull: return ""
        case let string as String: return string
        case let bool as Bool: return bool ? "1" : "0"
        case let number as NSNumber: return number.stringValue
        case let object as NSManagedObject: return object.objectID.uriRepresentation().absoluteString
        case let value?: return String(describing: value)
        }
    }

    /// `a` against `b` by the sort keys.
    func compare(_ a: FetchedPlacement, _ b: FetchedPlacement) -> ComparisonResult {
        for (index, key) in sortKeys.enumerated() {
            let result = key.directed(key.compare(prepared: a.values[index], b.values[index]))
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    private func placementAt(_ index: Int) -> FetchedPlacement {
        placements[ObjectIdentifier(objects[index])]!
    }

    /// The first index whose object sorts after `placement` (after every equal one).
    private func upperBound(_ placement: FetchedPlacement) -> Int {
        var low = 0, high = objects.count
        while low < high {
            let middle = (low + high) / 2
            if compare(placementAt(middle), placement) == .orderedDescending { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// The first index whose object does not sort before `placement`.
    private func lowerBound(_ placement: FetchedPlacement) -> Int {
        var low = 0, high = objects.count
        while low < high {
            let middle = (low + high) / 2
            if compare(placementAt(middle), placement) == .orderedAscending { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Where `object` is in the list: a binary search by its placement, then a scan of the objects
    /// that sort the same.
    func index(of object: NSManagedObject) -> Int? {
        guard let placement = placements[ObjectIdentifier(object)] else { return nil }
        var index = lowerBound(placement)
        while index < objects.count {
            if objects[index] === object { return index }
            if compare(placementAt(index), placement) != .orderedSame { break }
            index += 1
        }
        return nil
    }

    // MARK: Filling

    /// Takes fetched objects, already sorted by the sort keys, and cuts them into sections.
    /// Throws when a section name comes back after another section began (the first sort key
    /// does not order the sections), as Apple's `performFetch()` fails.
    mutating func fill(with fetched: [NSManagedObject]) throws {
        objects = fetched
        placements = Dictionary(minimumCapacity: fetched.count)
        for object in fetched { placements[ObjectIdentifier(object)] = placement(of: object) }
        // The store sorted its rows; an object the context already held may have other values
        // (changes not merged yet, unsaved ones with `includesPendingChanges` off, a parent's
        // newer values in a child). The list is kept sorted by the values it compares, so that
        // every object is found again: those objects go where their values put them (stably).
        if objects.indices.dropFirst().contains(where: { compare(placementAt($0 - 1), placementAt($0)) == .orderedDescending }) {
            objects = objects.enumerated().sorted { a, b in
                switch compare(placements[ObjectIdentifier(a.element)]!, placements[ObjectIdentifier(b.element)]!) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return a.offset < b.offset
                }
            }.map(\.element)
        }
        sections = findSections()
        if sectionPath != nil {
            var seen = Set<String>()
            for section in sections where !seen.insert(section.name).inserted {
                throw CoreDataError.make(.coreData,
                    "The fetched object at index \(section.start) has an out of order section name '\(section.name)'. Objects must be sorted by section name: make the first sort descriptor sort by the section key path")
            }
        }
    }

    /// The sections of the list: runs of one section name, each end found by a binary search
    /// (a section's objects are contiguous).
    private func findSections() -> [FetchedSectionRange] {
        guard sectionPath != nil else { return [FetchedSectionRange(name: "", start: 0, count: objects.count)] }
        var result: [FetchedSectionRange] = []
        var start = 0
        while start < objects.count {
            let name = placementAt(start).section
            // Gallop (`same` has the name, `other` does not or is the end), then bisect: O(log m)
            // for a section of m objects.
            var same = start, other = start + 1, step = 1
            while other < objects.count && placementAt(other).section == name {
                same = other
                step *= 2
                other = start + step
            }
            var low = same + 1, high = min(other, objects.count)
            while low < high {
                let middle = (low + high) / 2
                if placementAt(middle).section == name { low = middle + 1 } else { high = middle }
            }
            result.append(FetchedSectionRange(name: name, start: start, count: low - start))
            start = low
        }
        return result
    }

    // MARK: Changing

    /// Applies changes: `changed` are the objects the context reported (inserted, updated,
    /// deleted, refreshed); `belongs` tells whether one is now in the results; `updated` whether
    /// one counts as updated (reported as `.update` when it stays in its place).
    mutating func apply(changed: [NSManagedObject], belongs: (NSManagedObject) -> Bool,
                        updated: (NSManagedObject) -> Bool) -> FetchedListChanges {
        struct Entry {
            var object: NSManagedObject; var oldOffset: Int?; var newOffset: Int?; var oldSection: String?; var placement: FetchedPlacement?
            /// Still in the results, with sort values and section as before: it keeps its place
            /// (among objects that sort the same too), neither taken out nor put back.
            var stays = false
        }
        var entries: [Entry] = []
        var seen = Set<ObjectIdentifier>()
        for object in changed where seen.insert(ObjectIdentifier(object)).inserted {
            let old = index(of: object)
            let now = belongs(object) ? placement(of: object) : nil
            guard old != nil || now != nil else { continue }
            let before = old.map { _ in placements[ObjectIdentifier(object)]! }
            var entry = Entry(object: object, oldOffset: old, newOffset: nil, oldSection: before?.section, placement: now)
            if let before, let now { entry.stays = before.section == now.section && compare(before, now) == .orderedSame }
            entries.append(entry)
        }
        guard !entries.isEmpty else { return FetchedListChanges() }
        let oldSections = sections

        let removed = entries.filter { !$0.stays }.compactMap(\.oldOffset).sorted()
        var order = entries.indices.filter { entries[$0].placement != nil && !entries[$0].stays }
        order.sort { compare(entries[$0].placement!, entries[$1].placement!) == .orderedAscending }
        for offset in removed { placements[ObjectIdentifier(objects[offset])] = nil }
        if (removed.count + order.count) * 16 <= objects.count {
            // A few: out from the end, so that the offsets found stay right; in, in sort order,
            // each by binary search after the objects that sort the same, so that each lands
            // after the previous one, whose offset therefore stays right.
            for offset in removed.reversed() { objects.remove(at: offset) }
            for entry in order {
                let placement = entries[entry].placement!
                let offset = upperBound(placement)
                objects.insert(entries[entry].object, at: offset)
                placements[ObjectIdentifier(entries[entry].object)] = placement
                entries[entry].newOffset = offset
            }
        } else {
            // Many (a large save or merge): one pass to take them out, one to merge them in,
            // rather than a shift of the array's tail for each.
            var kept: [NSManagedObject] = []
            kept.reserveCapacity(objects.count - removed.count)
            var next = 0
            for (offset, object) in objects.enumerated() {
                if next < removed.count && removed[next] == offset { next += 1 } else { kept.append(object) }
            }
            var merged: [NSManagedObject] = []
            merged.reserveCapacity(kept.count + order.count)
            var taken = 0
            for entry in order {
                let placement = entries[entry].placement!
                while taken < kept.count && compare(placements[ObjectIdentifier(kept[taken])]!, placement) != .orderedDescending {
                    merged.append(kept[taken])
                    taken += 1
                }
                entries[entry].newOffset = merged.count
                merged.append(entries[entry].object)
                placements[ObjectIdentifier(entries[entry].object)] = placement
            }
            merged.append(contentsOf: kept[taken...])
            objects = merged
        }
        for index in entries.indices where entries[index].stays {
            placements[ObjectIdentifier(entries[index].object)] = entries[index].placement
            entries[index].newOffset = self.index(of: entries[index].object)
        }
        sections = findSections()

        var changes = FetchedListChanges()
        let newNames = Set(sections.map(\.name))
        let oldNames = Set(oldSections.map(\.name))
        for (index, section) in oldSections.enumerated() where !newNames.contains(section.name) {
            changes.deletedSections.append((index, section.name))
        }
        for (index, section) in sections.enumerated() where !oldNames.contains(section.name) {
            changes.insertedSections.append((index, section.name))
        }

        // An object that stays is an update, not a move, when it keeps its place among the
        // objects that did not change (as many of them before it as before) and among the other
        // objects reported as updates, in the same section.
        let inserted = order.map { entries[$0].newOffset! } // ascending
        func countBelow(_ sorted: [Int], _ value: Int) -> Int {
            var low = 0, high = sorted.count
            while low < high { let middle = (low + high) / 2; if sorted[middle] < value { low = middle + 1 } else { high = middle } }
            return low
        }
        var staying: [Int] = []
        for (index, entry) in entries.enumerated() {
            guard let old = entry.oldOffset, let new = entry.newOffset else { continue }
            if entry.oldSection == entry.placement!.section
                && old - countBelow(removed, old) == new - countBelow(inserted, new) && updated(entry.object) {
                staying.append(index)
            }
        }
        staying.sort { entries[$0].oldOffset! < entries[$1].oldOffset! }
        var updates = Set<Int>()
        var lastNew = -1
        for index in staying where entries[index].newOffset! > lastNew {
            updates.insert(index)
            lastNew = entries[index].newOffset!
        }

        for (index, entry) in entries.enumerated() {
            // An object that kept its place and did not change (an insert it was already in the
            // results for, a rolled-back delete never reported) is no change of the results.
            if entry.stays && !updated(entry.object) { continue }
            let oldPath = entry.oldOffset.map { Self.path(of: $0, in: oldSections) }
            let newPath = entry.newOffset.map { Self.path(of: $0, in: sections) }
            let type: NSFetchedResultsChangeType
            switch (oldPath, newPath) {
            case (_?, nil): type = .delete
            case (nil, _?): type = .insert
            default: type = updates.contains(index) ? .update : .move
            }
            changes.objects.append(FetchedObjectChange(object: entry.object, type: type, oldPath: oldPath, newPath: newPath,
                                                       oldOffset: entry.oldOffset, newOffset: entry.newOffset))
        }
        // Deletions (from the end), insertions (from the start), moves, updates: the order in
        // which a table view's batch of updates reads naturally.
        func rank(_ change: FetchedObjectChange) -> Int {
            switch change.type { case .delete: 0; case .insert: 1; case .move: 2; case .update: 3 }
        }
        changes.objects.sort { a, b in
            if rank(a) != rank(b) { return rank(a) < rank(b) }
            switch a.type {
            case .delete: return a.oldOffset! > b.oldOffset!
            default: return a.newOffset! < b.newOffset!
            }
        }
        return changes
    }

    /// Takes every object out (the context forgot them all); what that changed.
    mutating func removeAll() -> FetchedListChanges {
        // Every object deleted at its path, every section with it, read off the list as it is
        // (finding each object by its placement cost a scan of its ties: quadratic when many sort alike).
        // Deletions from the end, as `apply` reports them; a list without sections keeps its one
        // section, "", as an empty list has it.
        var changes = FetchedListChanges()
        if sectionPath != nil { changes.deletedSections = sections.enumerated().map { (index: $0.offset, name: $0.element.name) } }
        for (section, range) in sections.enumerated().reversed() {
            for offset in (range.start..<range.end).reversed() {
                changes.objects.append(FetchedObjectChange(object: objects[offset], type: .delete, oldPath: IndexPath(indexes: [section, offset - range.start]),
                                                           newPath: nil, oldOffset: offset, newOffset: nil))
            }
        }
        objects = []
        placements = [:]
        sections = findSections()
        return changes
    }

    /// The `[section, row]` index path of a flat offset.
    static func path(of offset: Int, in sections: [FetchedSectionRange]) -> IndexPath {
        var low = 0, high = sections.count
        while low < high {
            let middle = (low + high) / 2
            if sections[middle].end <= offset { low = middle + 1 } else { high = middle }
        }
        return IndexPath(indexes: [low, offset - sections[low].start])
    }
}
