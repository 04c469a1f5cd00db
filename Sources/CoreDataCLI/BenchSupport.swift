import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Shared pieces of `coredata bench`: the workloads, the engines, the stopwatch and the
// memory meter, the machine description. The engines live in their own files so that
// the raw SQLite code (`import CSQLite`) never sees GRDB's copy of sqlite3.h.

/// What the benchmark measures. Each insert workload runs on a fresh store file per repetition;
/// the fetch and the predicate workloads read a file filled once (untimed).
enum BenchWorkload: String, CaseIterable, Sendable {
    /// Seed 000: `Car(name)` rows, one save (transaction) per row.
    case carsSavedOneByOne = "a1"
    /// Seed 000: `Car(name)` rows, one save for all of them.
    case carsSavedOnce = "a2"
    /// GRDB's `InsertRecordClass`: rows of ten Integer 64 values, one save.
    case insertItems = "b"
    /// GRDB's `FetchRecordClass`: fetch every row of ten Integer 64 values and read them all.
    case fetchItems = "c"
    /// (b) as GRDB's Core Data benchmark writes it: `setValue(NSNumber(value: i), forKey:)`.
    /// The other engines do (b)'s work (they have no `NSNumber` to box).
    case insertItemsBoxed = "b'"
    /// (c) as GRDB's Core Data benchmark reads it: plain objects, `value(forKey:) as! NSNumber`.
    /// The other engines do (c)'s work.
    case fetchItemsBoxed = "c'"
    /// Issue 4: `code == %@` on the indexed column (about 20 rows each), many times.
    case equalityFetch = "d"
    /// Issue 4: `name BEGINSWITH[cd] %@` on the unindexed column with `fetchLimit` 7, many times.
    case prefixSearch = "e"
    /// Issue 4: `existingObject(with:)` by ID in a fresh context, many times.
    case lookupByID = "f"
    /// Issue 4: a dictionary fetch of `@sum`/`@avg` of `amount` grouped by `category`.
    case groupedAggregates = "g"
    /// Issue 22: a store of `Item` rows migrated in place to a model version that adds an
    /// optional attribute (BenchMigration.swift).
    case migrationAddAttribute = "m1"
    /// Issue 22: the same store migrated to a version that renames an attribute and makes it
    /// non-optional with a default.
    case migrationRenameAttribute = "m2"
    /// Issue 22: (m2)'s change made by a heavyweight migration (`NSMigrationManager`, object by
    /// object, into a new file moved into the store), against the raw SQL table copy.
    case migrationThroughManager = "m3"
    /// Issue 23: `NSBatchInsertRequest` with a dictionary handler, rows of ten Integer 64 values (BenchBatch.swift).
    case batchInsert = "bi"
    /// Issue 23: `NSBatchUpdateRequest` of every row of a filled store (`i1 + 1`).
    case batchUpdate = "bu"
    /// Issue 23: `NSBatchDeleteRequest` of every row of a filled store, by a predicate.
    case batchDelete = "bd"
    /// Issue 23: (b)'s one save of `Item` rows with persistent history on, against the same save
    /// with history off (in the raw SQLite column: the issue's baseline).
    case historySave = "bh"
    /// Issue 24: an `NSFetchedResultsController` over `Item`s sorted by `i0`, kept current
    /// through single-row edits that move rows (BenchFetchedResults.swift).
    case fetchedResults = "fr"

    /// Names that select several workloads with `--workload`.
    static let groups: [String: [BenchWorkload]] = [
        "a": [.carsSavedOneByOne, .carsSavedOnce],
        "predicates": [.equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates],
        "m": [.migrationAddAttribute, .migrationRenameAttribute, .migrationThroughManager],
        "batch": [.batchInsert, .batchUpdate, .batchDelete],
    ]

    /// The full-run row count (for the predicate workloads: the rows of the table queried).
    var fullSize: Int {
        switch self {
        case .carsSavedOneByOne, .carsSavedOnce: 10_000
        case .insertItems, .insertItemsBoxed: 50_000
        case .fetchItems, .fetchItemsBoxed: 200_000
        case .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates: 100_000
        case .migrationAddAttribute, .migrationRenameAttribute: 1_000_000
        case .migrationThroughManager: 100_000
        case .batchInsert, .batchUpdate, .batchDelete: 1_000_000
        case .historySave, .fetchedResults: 100_000
        }
    }

    /// Whether this is one of issue 4's predicate workloads: a table of `size` rows queried
    /// ``queries(size:)`` times, reported in a table of its own, per query.
    var isPredicateWorkload: Bool { PredicateBench.workloads.contains(self) }

    /// How many queries (or lookups) one repetition runs over a table of `size` rows (the size
    /// itself for the other workloads).
    func queries(size: Int) -> Int {
        switch self {
        case .carsSavedOneByOne, .carsSavedOnce, .insertItems, .fetchItems, .insertItemsBoxed, .fetchItemsBoxed,
             .migrationAddAttribute, .migrationRenameAttribute, .migrationThroughManager,
             .batchInsert, .batchUpdate, .batchDelete, .historySave, .fetchedResults: size
        case .equalityFetch: max(1, size / 100)
        case .prefixSearch: max(1, size / 200)
        case .lookupByID: max(1, size / 10)
        case .groupedAggregates: max(1, size / 20_000)
        }
    }

    var title: String {
        switch self {
        case .carsSavedOneByOne: "(a) insert Car, save each"
        case .carsSavedOnce: "(a) insert Car, one save"
        case .insertItems: "(b) insert Item×10 ints, one save"
        case .fetchItems: "(c) fetch Item, read 10 ints"
        case .insertItemsBoxed: "(b′) (b) through `NSNumber`"
        case .fetchItemsBoxed: "(c′) (c) through `value(forKey:) as! NSNumber`"
        case .equalityFetch: "(d) `code == %@` (indexed), ~20 objects"
        case .prefixSearch: "(e) `name BEGINSWITH[cd] %@`, limit 7"
        case .lookupByID: "(f) `existingObject(with:)`, fresh context"
        case .groupedAggregates: "(g) `@sum`, `@avg` of amount by category"
        case .migrationAddAttribute: "(m1) migrate: add an attribute"
        case .migrationRenameAttribute: "(m2) migrate: rename, make non-optional"
        case .migrationThroughManager: "(m3) (m2) by `NSMigrationManager`"
        case .batchInsert: "(bi) batch insert, dictionary handler"
        case .batchUpdate: "(bu) batch update `i1 + 1`"
        case .batchDelete: "(bd) batch delete by predicate"
        case .historySave: "(bh) (b) with persistent history"
        case .fetchedResults: "(fr) FRC kept current, 1 move per 100 rows"
        }
    }

    /// The target for swift-coredata's time over raw SQLite's (release build); `nil` where the
    /// issue sets none (the report says `—`).
    var target: Double? {
        switch self {
        case .migrationThroughManager, .fetchedResults: nil
        case .batchInsert, .historySave: 1.3
        case .batchUpdate, .batchDelete: 1.2
        case .carsSavedOneByOne, .carsSavedOnce, .fetchItems, .insertItemsBoxed, .fetchItemsBoxed: 3.0
        case .insertItems: 2.5
        case .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates: 2.0
        case .migrationAddAttribute, .migrationRenameAttribute: 1.5
        }
    }

    /// What the report says under the table about the workload's data, if anything.
    func note(size: Int, folder: BenchFolder) -> String? {
        switch self {
        case .historySave:
            return "the raw SQLite column is swift-coredata's same save with persistent history off (the target's baseline); the GRDB columns are their (b) insert."
        case .fetchedResults:
            return "\(FetchedResultsBench.edits(size: size)) edits, each moving one row: swift-coredata's `NSFetchedResultsController` finds the row's new index by binary search; the other engines `UPDATE` the row and count the rows sorting before it (a scan, the least a re-fetch costs)."
        case .prefixSearch:
            let scan = PredicateBench.data(rows: size, folder: folder).averagePrefixScan()
            return String(format: "a search reads %.0f rows on average before it has its %d (every engine evaluates its prefix test on each).", scan, PredicateBench.prefixLimit)
        default:
            return nil
        }
    }

    /// Whether a wrong result is reported (and the run goes on) instead of stopping the run:
    /// only for the grouped dictionary fetch, which the library computes naively (without its
    /// expressions and groups) until the SQL `GROUP BY` rewrite lands.
    var reportsWrongResults: Bool { self == .groupedAggregates }

    /// The value every engine must report for `size` rows (a check that all did the same work):
    /// the row count for inserts, the sum of all values read for the fetch; for the predicate
    /// workloads, computed from the data set in Swift (``PredicateBench/DataSet``).
    func expectedChecksum(size: Int, folder: BenchFolder) -> Int {
        switch self {
        case .carsSavedOneByOne, .carsSavedOnce, .insertItems, .insertItemsBoxed, .historySave: size
        case .fetchItems, .fetchItemsBoxed: 10 * (size * (size - 1) / 2)
        case .equalityFetch, .prefixSearch, .lookupByID, .groupedAggregates:
            PredicateBench.data(rows: size, folder: folder).expectedChecksum(self)
        case .migrationAddAttribute, .migrationRenameAttribute, .migrationThroughManager:
            MigrationBench.expectedChecksum(self, size: size)
        case .batchInsert, .batchUpdate, .batchDelete:
            BatchBench.expectedChecksum(self, size: size)
        case .fetchedResults:
            FetchedResultsBench.expectedChecksum(size: size)
        }
    }
}

/// The implementations compared.
enum BenchEngine: String, CaseIterable, Sendable {
    /// swift-coredata through Apple's API.
    case coreData = "coredata"
    /// The SQLite C API: the baseline.
    case raw
    /// GRDB records (`Record` subclasses), as GRDB's own benchmark uses them.
    case grdb
    /// GRDB's statement layer (cached statements with arguments, row cursors): what the library
    /// would call if it sat on GRDB instead of the C API (docs/SQLITE-LAYER.md).
    case grdbStatements = "grdb-sql"
    /// libpq's C API: the baseline of a run on a PostgreSQL server (`--store postgres://…`).
    case libpq

    /// The engines of a run on SQLite files, or on a PostgreSQL server.
    static func all(onPostgreSQL: Bool) -> [BenchEngine] {
        onPostgreSQL ? [.coreData, .libpq] : [.coreData, .raw, .grdb, .grdbStatements]
    }

    /// Whether the engine is a run's baseline, which the ratios divide by.
    var isBaseline: Bool { self == .raw || self == .libpq }

    var title: String {
        switch self {
        case .coreData: "swift-coredata"
        case .raw: "raw SQLite"
        case .grdb: "GRDB records"
        case .grdbStatements: "GRDB statements"
        case .libpq: "raw libpq"
        }
    }

    /// How the engine does the work, for the report.
    var summary: String {
        switch self {
        case .coreData: "`insertNewObject` + `setValue(_:forKey:)` + `save()`; `NSFetchRequest<BenchItem>` + typed `@Managed` reads"
        case .raw: "the C API, cached prepared statements, rows read into a small class"
        case .grdb: "`Record` subclasses in a `DatabasePool`, as GRDB's own benchmark"
        case .grdbStatements: "cached `Statement` + arguments, `Row` cursor, in a `DatabasePool`"
        case .libpq: "statements prepared once, parameters bound in binary, one transaction per save, text results read into a small class"
        }
    }

    /// How the engine does the predicate workloads (d)–(g), for the report.
    var predicateSummary: String {
        switch self {
        case .coreData: "an `NSFetchRequest<BenchProduct>` and an `NSPredicate(format:)` per query, `amount` read through `@Managed`, `existingObject(with:)`, `.dictionaryResultType` with `NSExpressionDescription`s and `propertiesToGroupBy`"
        case .raw: "one prepared statement per workload, rebound per query, rows read into a small class, `bench_begins_cd` (a function folding as the library does)"
        case .grdb: "the query interface on `Record` subclasses (`filter`, `fetchOne(key:)`, `select`/`group`), all queries in one `pool.read`"
        case .grdbStatements: "cached statements and `Row` cursors, all queries in one `pool.read`"
        case .libpq: "one prepared statement per workload, rebound per query; (e) `strpos(cd_fold_v1(name, 3), $1) = 1 ORDER BY id LIMIT 7`, the store's fold function, the prefix folded in the client"
        }
    }
}

/// One timed repetition.
struct BenchSample {
    /// Wall-clock seconds of the timed part.
    var seconds: Double
    /// The peak resident set during the timed part (bytes), when the kernel lets us reset the
    /// high-water mark; `nil` otherwise.
    var peakBytes: Int?
    /// The resident set when the timed part began (bytes).
    var startBytes: Int?
    /// See ``BenchWorkload/expectedChecksum(size:folder:)``.
    var checksum: Int
}

/// A function that runs one repetition of a workload and measures it with a ``BenchMeter``.
typealias BenchRepetition = () throws -> BenchSample

/// Times a block and measures the resident-set high-water mark during it.
///
/// Before the block: `malloc_trim(0)` hands freed heap back to the kernel and writing `5` to
/// `/proc/self/clear_refs` resets `VmHWM` to the current RSS (Linux 4.0+); after it, `VmHWM`
/// is the peak of that phase alone.
/// What Foundation's `NSNumber` costs the boxed workloads by itself, with no store: (b′)'s
/// `NSNumber(value:)` per value, and (c′)'s number per value read back through `as! NSNumber`
/// and `intValue`. On Linux each `NSNumber` is a `CFNumber` allocated and freed (Apple's
/// platforms tag small numbers in the pointer); no engine can go below this. Printed under the
/// table so that swift-coredata's own share of (b′) and (c′) can be read off the same run.
enum NumberFloor {
    /// The median of `repetitions` timings of the workload's `NSNumber` work for `size` rows.
    static func seconds(_ workload: BenchWorkload, size: Int, repetitions: Int) -> Double? {
        guard workload == .insertItemsBoxed || workload == .fetchItemsBoxed else { return nil }
        let values = size * 10
        var times: [Double] = []
        for _ in 0..<max(1, repetitions) {
            let sample = BenchMeter.measure {
                var sum = 0
                for i in 0..<values {
                    let number = box(i)
                    sum &+= workload == .fetchItemsBoxed ? (number as! NSNumber).intValue : (number == nil ? 0 : 1)
                }
                return sum
            }
            times.append(sample.seconds)
        }
        times.sort()
        return times[times.count / 2]
    }

    /// An `NSNumber` as key-value coding hands one out (an `Any?`), made out of line so that the
    /// loop cannot skip it.
    @inline(never)
    static func box(_ i: Int) -> Any? { NSNumber(value: Int64(i)) }

    /// The line under the table: the floor, and swift-coredata's time above it, over the raw
    /// engine's (raw SQLite, or raw libpq on a PostgreSQL run).
    static func note(floor: Double, coreData: Double, raw: Double, rawTitle: String) -> String {
        "Foundation's `NSNumber` work alone (no store) took \(String(format: "%.1f", floor * 1000)) ms in this run, "
            + "\(String(format: "%.2f", floor / raw))× \(rawTitle)'s time; swift-coredata's time above it is "
            + "\(String(format: "%.2f", (coreData - floor) / raw))× \(rawTitle)'s."
    }
}

enum BenchMeter {
    static func measure(_ body: () throws -> Int) rethrows -> BenchSample {
        trimHeap()
        let canReset = resetHighWaterMark()
        let startBytes = status("VmRSS")
        let start = DispatchTime.now().uptimeNanoseconds
        let checksum = try timedPart(body)
        let end = DispatchTime.now().uptimeNanoseconds
        let peak = canReset ? status("VmHWM") : nil
        return BenchSample(seconds: Double(end - start) / 1e9, peakBytes: peak, startBytes: startBytes, checksum: checksum)
    }

    /// The timed work itself, kept out of line so that profilers can single it out
    /// (`valgrind --tool=callgrind --toggle-collect='*timedPart*'`).
    @inline(never)
    static func timedPart(_ body: () throws -> Int) rethrows -> Int {
        try body()
    }

    /// glibc's `malloc_trim(0)` (not in the Glibc module's headers; found with `dlsym`).
    static func trimHeap() {
        #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }

    /// Resets the process's RSS high-water mark; `false` if the kernel refuses.
    static func resetHighWaterMark() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    /// A `kB` line of `/proc/self/status`, in bytes.
    static func status(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            let digits = line.dropFirst(key.count + 1).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }
}

/// A temporary folder for the benchmark's store files, removed when the run ends; in a run on
/// a PostgreSQL server (`--store postgres://…`), the stores are databases the server makes.
final class BenchFolder {
    let url: URL
    /// The server of a PostgreSQL run, whose databases are the run's stores.
    let server: BenchPostgreSQLServer?
    private var counter = 0

    init(server: BenchPostgreSQLServer? = nil) throws {
        self.server = server
        url = FileManager.default.temporaryDirectory.appendingPathComponent("coredata-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Where a new store goes: a new file name, or in a PostgreSQL run a new, empty database.
    func freshStore(_ stem: String) throws -> URL {
        guard let server else { return freshFile(stem) }
        counter += 1
        return try server.freshDatabase("\(stem)-\(counter)")
    }

    /// Removes a store ``freshStore(_:)`` made.
    func removeStore(_ store: URL) {
        if let server { server.drop(store) } else { Self.remove(store) }
    }

    /// A new file name in the folder (nothing is created).
    func freshFile(_ stem: String) -> URL {
        counter += 1
        return url.appendingPathComponent("\(stem)-\(counter).sqlite")
    }

    private var prepared: [String: Any] = [:]

    /// What `make` returns, made once per run and kept under `key` (the predicate workloads'
    /// data set and their filled store files, shared by the four workloads).
    func prepared<T>(_ key: String, _ make: () throws -> T) rethrows -> T {
        if let value = prepared[key] as? T { return value }
        let value = try make()
        prepared[key] = value
        return value
    }

    /// Removes a store file with its `-wal` and `-shm` companions.
    static func remove(_ file: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: file.path + suffix)
        }
    }

    func removeAll() {
        server?.dropAll()
        try? FileManager.default.removeItem(at: url)
    }
}

/// The machine, for the report header.
enum BenchMachine {
    static var cpuModel: String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown CPU" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") { return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces) }
        }
        return "unknown CPU"
    }

    static var operatingSystem: String {
        var name = "Linux"
        if let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
                name = line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        #if canImport(Glibc)
        var info = utsname()
        if uname(&info) == 0 {
            let release = withUnsafeBytes(of: &info.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let machine = withUnsafeBytes(of: &info.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            name += ", kernel \(release) \(machine)"
        }
        #endif
        return name
    }

    static var buildConfiguration: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    static var swiftCompiler: String {
        #if compiler(>=6.4)
        "Swift 6.4 or later"
        #elseif compiler(>=6.3)
        "Swift 6.3"
        #elseif compiler(>=6.2)
        "Swift 6.2"
        #else
        "Swift 6.1 or earlier"
        #endif
    }
}
