import ArgumentParser
import CoreData
import Foundation

/// `coredata bench`: swift-coredata against the raw SQLite C API and GRDB, side by side in one run.
///
/// Workloads (sizes of a full run):
/// - (a) seed 000: 10,000 `Car(name)` inserts saved one by one, and 10,000 saved once;
/// - (b) GRDB's `InsertRecordClass`: 50,000 objects of ten Integer 64 attributes, one save;
/// - (c) GRDB's `FetchRecordClass`: 200,000 such rows fetched and all ten values read;
/// - (d)–(g), issue 4's predicate workloads on a table of 100,000 products: 1,000 fetches by an
///   indexed `code` (about 20 objects each), 500 `BEGINSWITH[cd]` searches with `fetchLimit` 7,
///   10,000 `existingObject(with:)` lookups, 5 dictionary fetches of `@sum`/`@avg` grouped by a
///   column (BenchPredicates.swift);
/// - (fr), issue 24: an `NSFetchedResultsController` over 100,000 `Item`s kept current through
///   1,000 single-row moves (BenchFetchedResults.swift);
/// - (m1), (m2), issue 22: a store of 1,000,000 rows migrated in place to a model version that adds
///   an attribute, or renames one and makes it non-optional (BenchMigration.swift).
///
/// Every engine uses WAL with `synchronous = NORMAL` and a fresh file in a temporary folder.
/// Only the work itself is timed: opening the store and creating tables, and filling the
/// fetch's file, are not. Engines take turns in a rotating order in each repetition, and the
/// median of the repetitions is reported. Progress goes to stderr; the report (Markdown) to stdout.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks swift-coredata against the raw SQLite C API and GRDB.",
        discussion: """
            Workloads: a1 (10,000 Car inserts, save each), a2 (10,000 Car inserts, one save), \
            b (50,000 Item inserts of 10 Integer 64 values, one save), c (fetch 200,000 Items, read 10 values each), \
            and on a table of 100,000 products (predicates: d, e, f, g): d (1,000 fetches of code == %@, an indexed column, \
            ~20 objects each), e (500 fetches of name BEGINSWITH[cd] %@ with fetchLimit 7), f (10,000 existingObject(with:) \
            in a fresh context), g (5 dictionary fetches of @sum and @avg of amount grouped by category); \
            m1 and m2 (migrate a store of 1,000,000 Items to a model version that adds an attribute, or renames one \
            and makes it non-optional), m3 (m2's change on 100,000 Items by NSMigrationManager; m selects all three); \
            bi, bu, bd (batch insert of 1,000,000 Items with a dictionary handler, batch update and batch delete of \
            a filled store; batch selects the three), bh ((b)'s save of 100,000 Items with persistent history on, \
            against the same save with it off); \
            fr (an NSFetchedResultsController over 100,000 Items sorted by i0, kept current through 1,000 edits that each move \
            one row; the other engines UPDATE the row and count the rows before it); \
            stall (main-queue lateness while a background context imports 100,000 Items in saves of 1,000). \
            With --store postgres://user@host:port/database: a1, a2, b, b', c, c' and d–g on that PostgreSQL server, \
            swift-coredata's PostgreSQL store against libpq's C API (each store a new database, dropped at the end). \
            Run it in a release build: swift run -c release coredata bench
            """
    )

    @Flag(help: "A small run for CI: sizes divided by 20, one repetition.") var quick = false
    @Option(help: "Repetitions of each measurement; the median is reported (default 5, or 1 with --quick).") var repetitions: Int?
    @Option(help: "Divide every workload's size by this (default 1, or 20 with --quick).") var divideSizesBy: Int?
    @Option(name: .customLong("workload"), help: "Run only these workloads (a, a1, a2, b, b', c, c', d, e, f, g, predicates, m1, m2, m3, m, bi, bu, bd, batch, bh, fr, stall; repeatable).") var workloadNames: [String] = []
    @Option(name: .customLong("engine"), help: "Run only these engines (coredata, raw, grdb, grdb-sql; with --store: coredata, libpq; repeatable). Ratios need raw (libpq).") var engineNames: [String] = []
    @Option(name: .customLong("store"), help: "Run on a PostgreSQL server instead of SQLite files: postgres://user@host:port/database, a database the run connects to in order to make its own (it needs CREATEDB).") var storeURL: String?

    /// The server of a PostgreSQL run (`--store`).
    var postgresURL: URL? { storeURL.flatMap(URL.init(string:)) }

    func validate() throws {
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let divideSizesBy, divideSizesBy < 1 { throw ValidationError("--divide-sizes-by must be at least 1") }
        if let storeURL {
            guard let url = postgresURL, ["postgres", "postgresql"].contains(url.scheme?.lowercased()) else {
                throw ValidationError("--store takes a postgres://user@host:port/database URL, not '\(PostgreSQLURL.masked(storeURL))'")
            }
        }
        _ = try selectedWorkloads()
        _ = try selectedEngines()
    }

    /// Whether the stall benchmark runs: in a full run, or when asked for by name.
    var runsStall: Bool {
        storeURL == nil && (workloadNames.isEmpty || workloadNames.flatMap { $0.split(separator: ",") }.contains("stall"))
    }

    func selectedWorkloads() throws -> [BenchWorkload] {
        let available = storeURL == nil ? BenchWorkload.allCases : PostgreSQLBench.workloads
        if workloadNames.isEmpty { return available }
        var result: [BenchWorkload] = []
        for name in workloadNames.flatMap({ $0.split(separator: ",").map(String.init) }) where name != "stall" {
            let matches = BenchWorkload.groups[name] ?? BenchWorkload(rawValue: name).map { [$0] } ?? []
            guard !matches.isEmpty else {
                throw ValidationError("Unknown workload '\(name)': use a, a1, a2, b, b', c, c', d, e, f, g, predicates, m1, m2, m or stall")
            }
            if let missing = matches.first(where: { !available.contains($0) }) {
                throw ValidationError("\(missing.title) does not run on PostgreSQL yet: use a, a1, a2, b, b', c, c', d, e, f, g or predicates")
            }
            result += matches.filter { !result.contains($0) }
        }
        return BenchWorkload.allCases.filter(result.contains)
    }

    func selectedEngines() throws -> [BenchEngine] {
        let onPostgreSQL = storeURL != nil
        let available = BenchEngine.all(onPostgreSQL: onPostgreSQL)
        if engineNames.isEmpty { return available }
        var result: [BenchEngine] = []
        for name in engineNames.flatMap({ $0.split(separator: ",").map(String.init) }) {
            // (On PostgreSQL, `raw` is libpq: the raw client.)
            guard let engine = BenchEngine(rawValue: onPostgreSQL && name.lowercased() == "raw" ? "libpq" : name.lowercased()),
                  available.contains(engine) else {
                throw ValidationError("Unknown engine '\(name)': use " + (onPostgreSQL ? "coredata or libpq" : "coredata, raw, grdb or grdb-sql"))
            }
            if !result.contains(engine) { result.append(engine) }
        }
        return available.filter(result.contains)
    }

    func run() throws {
        let repetitions = self.repetitions ?? (quick ? 1 : 5)
        let divisor = divideSizesBy ?? (quick ? 20 : 1)
        let workloads = try selectedWorkloads()
        let engines = try selectedEngines()
        let server = try postgresURL.map(BenchPostgreSQLServer.init(url:))
        let folder = try BenchFolder(server: server)
        defer { folder.removeAll() }

        var results: [BenchResult] = []
        var failures: [String] = []
        for workload in workloads {
            let size = max(1, workload.fullSize / divisor)
            progress("\(workload.title): \(size) rows, preparing…")
            do {
                results.append(try measure(workload, size: size, engines: engines, repetitions: repetitions, folder: folder))
            } catch let error as NSError where server != nil && error.domain == NSCocoaErrorDomain && error.code == 134091 {
                // On PostgreSQL a workload whose predicate the store does not compile yet
                // (`NSPersistentStoreUnsupportedRequestTypeError`) is reported, and the run goes on.
                progress("  refused by the store: \(error.localizedDescription)")
                failures.append("\(workload.title): refused by the PostgreSQL store (134091): \(error.localizedDescription)")
            }
        }

        var stall: [StallBench.Result] = []
        if runsStall {
            stall = try StallBench.run(objects: max(1_000, 100_000 / divisor), batch: 1_000, folder: folder, progress: progress)
        }

        let invocation = (["coredata"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        var report = results.isEmpty ? "" : Self.report(results, engines: engines, repetitions: repetitions, divisor: divisor,
                                                        invocation: invocation, server: server)
        if !failures.isEmpty { report += "\n" + failures.joined(separator: "\n") + "\n" }
        if !stall.isEmpty { report += (report.isEmpty ? "" : "\n") + StallBench.report(stall).joined(separator: "\n") + "\n" }
        print(report)
    }

    /// The repetitions of one workload by every engine, in a rotating order.
    private func measure(_ workload: BenchWorkload, size: Int, engines: [BenchEngine], repetitions: Int, folder: BenchFolder) throws -> BenchResult {
        var runs: [BenchEngine: BenchRepetition] = [:]
        for engine in engines {
            runs[engine] = try Self.repetition(engine, workload, size: size, folder: folder)
        }
        var result = BenchResult(workload: workload, size: size)
        let expected = workload.expectedChecksum(size: size, folder: folder)
        result.expectedChecksum = expected
        result.note = workload.note(size: size, folder: folder)
        for repetition in 0..<repetitions {
            // Rotate who goes first, so no engine always runs on a cold (or warm) machine.
            let order = (0..<engines.count).map { engines[($0 + repetition) % engines.count] }
            for engine in order {
                let sample = try runs[engine]!()
                var note = ""
                if sample.checksum != expected {
                    let message = "\(engine.title) did different work in \(workload.title): checksum \(sample.checksum), expected \(expected)"
                    guard workload.reportsWrongResults else { throw BenchFailure(message) }
                    result.wrongResults[engine] = sample.checksum
                    note = " (wrong result: \(message))"
                }
                result.samples[engine, default: []].append(sample)
                progress("  \(repetition + 1)/\(repetitions) \(Self.pad(engine.title, 15)) \(Self.time(sample.seconds))\(note)")
            }
        }
        if engines.contains(.coreData), let baseline = [BenchEngine.raw, .libpq].first(where: engines.contains),
           let floor = NumberFloor.seconds(workload, size: size, repetitions: repetitions) {
            result.note = NumberFloor.note(floor: floor, coreData: result.median(.coreData), raw: result.median(baseline), rawTitle: baseline.title)
        }
        return result
    }

    static func repetition(_ engine: BenchEngine, _ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        switch engine {
        case .coreData: try CoreDataBench.repetition(workload, size: size, folder: folder)
        case .raw: try RawSQLiteBench.repetition(workload, size: size, folder: folder)
        case .grdb: try GRDBBench.repetition(workload, size: size, folder: folder)
        case .grdbStatements: try GRDBStatementBench.repetition(workload, size: size, folder: folder)
        case .libpq: try RawPostgreSQLBench.repetition(workload, size: size, folder: folder)
        }
    }

    private func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    // MARK: The report

    static func report(_ results: [BenchResult], engines: [BenchEngine], repetitions: Int, divisor: Int, invocation: String,
                       server: BenchPostgreSQLServer? = nil) -> String {
        var lines: [String] = []
        let date = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime])
        lines.append("## coredata bench — \(date)")
        lines.append("")
        lines.append("- Command: `\(invocation)` (\(BenchMachine.buildConfiguration) build, \(BenchMachine.swiftCompiler))")
        lines.append("- Machine: \(BenchMachine.cpuModel), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(BenchMachine.operatingSystem)")
        if let server {
            lines.append("- PostgreSQL \(server.version) at \(server.maskedURL), over libpq \(PostgreSQLBench.libpqVersion) (both engines); every store a new database of the server's")
        } else {
            lines.append("- SQLite \(RawSQLiteBench.sqliteVersion) (the system library, used by every engine), WAL, `synchronous = NORMAL`, a fresh file per run")
        }
        lines.append("- \(repetitions) repetition\(repetitions == 1 ? "" : "s") per measurement, median reported\(divisor > 1 ? "; sizes divided by \(divisor)" : "")")
        let hasThroughput = results.contains { !$0.workload.isPredicateWorkload }
        lines.append("- Engines: " + engines.map { hasThroughput ? "\($0.title) (\($0.summary))" : $0.title }.joined(separator: "; "))
        if results.contains(where: \.workload.isPredicateWorkload) {
            lines.append("- Predicate workloads: " + engines.map { "\($0.title): \($0.predicateSummary)" }.joined(separator: "; "))
        }
        lines.append("")
        let throughput = results.filter { !$0.workload.isPredicateWorkload }
        let predicates = results.filter(\.workload.isPredicateWorkload)
        if !throughput.isEmpty {
            lines.append("Median wall-clock time of the timed part (opening stores and creating tables excluded):")
            lines.append("")
            lines += timeTables(throughput, engines: engines, perQuery: false)
        }
        if !predicates.isEmpty {
            lines.append("Predicate workloads (issue 4) on a table of \(grouped(predicates[0].size)) products: median wall-clock time of all the queries of a repetition (opening stores excluded):")
            lines.append("")
            lines += timeTables(predicates, engines: engines, perQuery: true)
        }
        lines.append("Spread of the repetitions (min – max):")
        lines.append("")
        lines.append("| workload |" + engines.map { " \($0.title) |" }.joined())
        lines.append("|---|" + String(repeating: "---:|", count: engines.count))
        for result in results {
            lines.append("| \(result.workload.title) |" + engines.map { engine in
                let times = result.samples[engine, default: []].map(\.seconds)
                return " \(time(times.min() ?? 0)) – \(time(times.max() ?? 0)) |"
            }.joined())
        }
        let hasMemory = results.contains { $0.samples.values.contains { $0.contains { $0.peakBytes != nil } } }
        lines.append("")
        if hasMemory {
            lines.append("Peak RSS during the timed part (VmHWM, reset before each run; highest of the repetitions), and its growth over the RSS at the start:")
            lines.append("")
            lines.append("| workload |" + engines.map { " \($0.title) |" }.joined())
            lines.append("|---|" + String(repeating: "---:|", count: engines.count))
            for result in results {
                lines.append("| \(result.workload.title) |" + engines.map { engine in
                    let samples = result.samples[engine, default: []]
                    guard let peak = samples.compactMap(\.peakBytes).max() else { return " – |" }
                    let growth = samples.compactMap { sample in sample.peakBytes.map { $0 - (sample.startBytes ?? 0) } }.max() ?? 0
                    return " \(megabytes(peak)) (+\(megabytes(growth))) |"
                }.joined())
            }
            lines.append("")
        }
        if let peak = BenchMeter.status("VmPeak"), let hwm = BenchMeter.status("VmHWM") {
            lines.append("Process at the end: VmHWM \(megabytes(hwm)) (since the last reset), VmPeak \(megabytes(peak)).")
        }
        return lines.joined(separator: "\n")
    }

    /// The table of median times and ratios, then the one of time per row (or per query), and
    /// the notes of the workloads that have some.
    static func timeTables(_ results: [BenchResult], engines: [BenchEngine], perQuery: Bool) -> [String] {
        var lines: [String] = []
        var header = perQuery ? "| workload | queries |" : "| workload | rows |"
        var rule = "|---|---:|"
        for engine in engines { header += " \(engine.title) |"; rule += "---:|" }
        // The baseline: raw SQLite, or libpq on PostgreSQL, whose target is the issue's 1.5× for every workload.
        let baseline = engines.first(where: \.isBaseline) ?? .raw
        let onPostgreSQL = baseline == .libpq
        let hasRaw = engines.contains(baseline), hasGRDB = engines.contains(.grdb), hasCoreData = engines.contains(.coreData)
        let hasStatements = engines.contains(.grdbStatements)
        if hasRaw && hasCoreData { header += " coredata / \(onPostgreSQL ? "libpq" : "raw") | target |"; rule += "---:|---:|" }
        if hasRaw && hasGRDB { header += " GRDB records / raw |"; rule += "---:|" }
        if hasRaw && hasStatements { header += " GRDB statements / raw |"; rule += "---:|" }
        if hasGRDB && hasCoreData { header += " coredata / GRDB records |"; rule += "---:|" }
        lines.append(header)
        lines.append(rule)
        var notes: [String] = results.compactMap { result in result.note.map { "\(result.workload.title): \($0)" } }
        for result in results {
            let count = perQuery ? result.queries : result.size
            var line = "| \(result.workload.title) | \(grouped(count)) |"
            for engine in engines { line += " \(time(result.median(engine)))\(result.wrongResults[engine] == nil ? "" : " †") |" }
            let coreData = result.median(.coreData), raw = result.median(baseline), grdb = result.median(.grdb)
            if hasRaw && hasCoreData {
                let ratio = coreData / raw
                if let target = onPostgreSQL ? PostgreSQLBench.target : result.workload.target {
                    let verdict = result.wrongResults[.coreData] != nil ? "wrong result" : ratio <= target ? "met" : "**missed**"
                    line += " \(String(format: "%.2f×", ratio)) | ≤ \(String(format: "%.1f×", target)) \(verdict) |"
                } else {
                    line += " \(String(format: "%.2f×", ratio)) | — |"
                }
            }
            if hasRaw && hasGRDB { line += " \(String(format: "%.2f×", grdb / raw)) |" }
            if hasRaw && hasStatements { line += " \(String(format: "%.2f×", result.median(.grdbStatements) / raw)) |" }
            if hasGRDB && hasCoreData { line += " \(String(format: "%.2f×", coreData / grdb)) |" }
            lines.append(line)
            for engine in engines {
                guard let checksum = result.wrongResults[engine] else { continue }
                notes.append("† \(result.workload.title), \(engine.title): wrong result (checksum \(checksum), expected \(result.expectedChecksum)); the time is of what it did.")
            }
        }
        lines.append("")
        if !notes.isEmpty { lines += notes + [""] }
        lines.append(perQuery ? "Per query (median time / queries):" : "Per row (median time / rows):")
        lines.append("")
        lines.append("| workload |" + engines.map { " \($0.title) |" }.joined())
        lines.append("|---|" + String(repeating: "---:|", count: engines.count))
        for result in results {
            let count = Double(perQuery ? result.queries : result.size)
            lines.append("| \(result.workload.title) |" + engines.map { " \(perUnit(result.median($0) / count)) |" }.joined())
        }
        lines.append("")
        return lines
    }

    static func time(_ seconds: Double) -> String {
        let ms = seconds * 1000
        if ms >= 1000 { return String(format: "%.3f s", seconds) }
        if ms >= 100 { return String(format: "%.0f ms", ms) }
        if ms >= 10 { return String(format: "%.1f ms", ms) }
        return String(format: "%.2f ms", ms)
    }

    /// A time per row or per query: in microseconds below a millisecond.
    static func perUnit(_ seconds: Double) -> String {
        seconds < 1e-3 ? String(format: "%.2f µs", seconds * 1e6) : time(seconds)
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }

    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return result
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

/// The samples of one workload, by engine.
struct BenchResult {
    var workload: BenchWorkload
    var size: Int
    var samples: [BenchEngine: [BenchSample]] = [:]
    /// The engines whose result differed from the expected one (their checksum), for a workload
    /// that reports it instead of stopping (``BenchWorkload/reportsWrongResults``).
    var wrongResults: [BenchEngine: Int] = [:]
    /// The checksum every engine should have reported.
    var expectedChecksum = 0
    /// A line printed under the table (``BenchWorkload/note(size:folder:)``).
    var note: String?
    /// The queries of a repetition (the rows for the workloads that are not about queries).
    var queries: Int { workload.queries(size: size) }

    /// The median time of an engine's repetitions (the mean of the middle two for an even count).
    func median(_ engine: BenchEngine) -> Double {
        let times = samples[engine, default: []].map(\.seconds).sorted()
        guard !times.isEmpty else { return .nan }
        let middle = times.count / 2
        return times.count % 2 == 1 ? times[middle] : (times[middle - 1] + times[middle]) / 2
    }
}
