import ArgumentParser
import Foundation

/// `coredata bench`: swift-coredata against the raw SQLite C API and GRDB, side by side in one run.
///
/// Workloads (sizes of a full run):
/// - (a) seed 000: 10,000 `Car(name)` inserts saved one by one, and 10,000 saved once;
/// - (b) GRDB's `InsertRecordClass`: 50,000 objects of ten Integer 64 attributes, one save;
/// - (c) GRDB's `FetchRecordClass`: 200,000 such rows fetched and all ten values read.
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
            stall (main-queue lateness while a background context imports 100,000 Items in saves of 1,000). \
            Run it in a release build: swift run -c release coredata bench
            """
    )

    @Flag(help: "A small run for CI: sizes divided by 20, one repetition.") var quick = false
    @Option(help: "Repetitions of each measurement; the median is reported (default 5, or 1 with --quick).") var repetitions: Int?
    @Option(help: "Divide every workload's size by this (default 1, or 20 with --quick).") var divideSizesBy: Int?
    @Option(name: .customLong("workload"), help: "Run only these workloads (a, a1, a2, b, c, stall; repeatable).") var workloadNames: [String] = []
    @Option(name: .customLong("engine"), help: "Run only these engines (coredata, raw, grdb, grdb-sql; repeatable). Ratios need raw.") var engineNames: [String] = []

    func validate() throws {
        if let repetitions, repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let divideSizesBy, divideSizesBy < 1 { throw ValidationError("--divide-sizes-by must be at least 1") }
        _ = try selectedWorkloads()
        _ = try selectedEngines()
    }

    /// Whether the stall benchmark runs: in a full run, or when asked for by name.
    var runsStall: Bool {
        workloadNames.isEmpty || workloadNames.flatMap { $0.split(separator: ",") }.contains("stall")
    }

    func selectedWorkloads() throws -> [BenchWorkload] {
        if workloadNames.isEmpty { return BenchWorkload.allCases }
        var result: [BenchWorkload] = []
        for name in workloadNames.flatMap({ $0.split(separator: ",").map(String.init) }) where name != "stall" {
            let matches = name == "a" ? [.carsSavedOneByOne, .carsSavedOnce] : BenchWorkload(rawValue: name).map { [$0] } ?? []
            guard !matches.isEmpty else { throw ValidationError("Unknown workload '\(name)': use a, a1, a2, b, c or stall") }
            result += matches.filter { !result.contains($0) }
        }
        return BenchWorkload.allCases.filter(result.contains)
    }

    func selectedEngines() throws -> [BenchEngine] {
        if engineNames.isEmpty { return BenchEngine.allCases }
        var result: [BenchEngine] = []
        for name in engineNames.flatMap({ $0.split(separator: ",").map(String.init) }) {
            guard let engine = BenchEngine(rawValue: name.lowercased()) else {
                throw ValidationError("Unknown engine '\(name)': use coredata, raw, grdb or grdb-sql")
            }
            if !result.contains(engine) { result.append(engine) }
        }
        return BenchEngine.allCases.filter(result.contains)
    }

    func run() throws {
        let repetitions = self.repetitions ?? (quick ? 1 : 5)
        let divisor = divideSizesBy ?? (quick ? 20 : 1)
        let workloads = try selectedWorkloads()
        let engines = try selectedEngines()
        let folder = try BenchFolder()
        defer { folder.removeAll() }

        var results: [BenchResult] = []
        for workload in workloads {
            let size = max(1, workload.fullSize / divisor)
            progress("\(workload.title): \(size) rows, preparing…")
            var runs: [BenchEngine: BenchRepetition] = [:]
            for engine in engines {
                runs[engine] = try Self.repetition(engine, workload, size: size, folder: folder)
            }
            var result = BenchResult(workload: workload, size: size)
            for repetition in 0..<repetitions {
                // Rotate who goes first, so no engine always runs on a cold (or warm) machine.
                let order = (0..<engines.count).map { engines[($0 + repetition) % engines.count] }
                for engine in order {
                    let sample = try runs[engine]!()
                    let expected = workload.expectedChecksum(size: size)
                    guard sample.checksum == expected else {
                        throw BenchFailure("\(engine.title) did different work in \(workload.title): checksum \(sample.checksum), expected \(expected)")
                    }
                    result.samples[engine, default: []].append(sample)
                    progress("  \(repetition + 1)/\(repetitions) \(Self.pad(engine.title, 15)) \(Self.time(sample.seconds))")
                }
            }
            results.append(result)
        }

        var stall: [StallBench.Result] = []
        if runsStall {
            stall = try StallBench.run(objects: max(1_000, 100_000 / divisor), batch: 1_000, folder: folder, progress: progress)
        }

        let invocation = (["coredata"] + CommandLine.arguments.dropFirst()).joined(separator: " ")
        var report = results.isEmpty ? "" : Self.report(results, engines: engines, repetitions: repetitions, divisor: divisor, invocation: invocation)
        if !stall.isEmpty { report += (report.isEmpty ? "" : "\n") + StallBench.report(stall).joined(separator: "\n") + "\n" }
        print(report)
    }

    static func repetition(_ engine: BenchEngine, _ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        switch engine {
        case .coreData: try CoreDataBench.repetition(workload, size: size, folder: folder)
        case .raw: try RawSQLiteBench.repetition(workload, size: size, folder: folder)
        case .grdb: try GRDBBench.repetition(workload, size: size, folder: folder)
        case .grdbStatements: try GRDBStatementBench.repetition(workload, size: size, folder: folder)
        }
    }

    private func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    // MARK: The report

    static func report(_ results: [BenchResult], engines: [BenchEngine], repetitions: Int, divisor: Int, invocation: String) -> String {
        var lines: [String] = []
        let date = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime])
        lines.append("## coredata bench — \(date)")
        lines.append("")
        lines.append("- Command: `\(invocation)` (\(BenchMachine.buildConfiguration) build, \(BenchMachine.swiftCompiler))")
        lines.append("- Machine: \(BenchMachine.cpuModel), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(BenchMachine.operatingSystem)")
        lines.append("- SQLite \(RawSQLiteBench.sqliteVersion) (the system library, used by every engine), WAL, `synchronous = NORMAL`, a fresh file per run")
        lines.append("- \(repetitions) repetition\(repetitions == 1 ? "" : "s") per measurement, median reported\(divisor > 1 ? "; sizes divided by \(divisor)" : "")")
        lines.append("- Engines: " + engines.map { "\($0.title) (\($0.summary))" }.joined(separator: "; "))
        lines.append("")
        lines.append("Median wall-clock time of the timed part (opening stores and creating tables excluded):")
        lines.append("")
        var header = "| workload | rows |"
        var rule = "|---|---:|"
        for engine in engines { header += " \(engine.title) |"; rule += "---:|" }
        let hasRaw = engines.contains(.raw), hasGRDB = engines.contains(.grdb), hasCoreData = engines.contains(.coreData)
        let hasStatements = engines.contains(.grdbStatements)
        if hasRaw && hasCoreData { header += " coredata / raw | target |"; rule += "---:|---:|" }
        if hasRaw && hasGRDB { header += " GRDB records / raw |"; rule += "---:|" }
        if hasRaw && hasStatements { header += " GRDB statements / raw |"; rule += "---:|" }
        if hasGRDB && hasCoreData { header += " coredata / GRDB records |"; rule += "---:|" }
        lines.append(header)
        lines.append(rule)
        for result in results {
            var line = "| \(result.workload.title) | \(grouped(result.size)) |"
            for engine in engines { line += " \(time(result.median(engine))) |" }
            let coreData = result.median(.coreData), raw = result.median(.raw), grdb = result.median(.grdb)
            if hasRaw && hasCoreData {
                let ratio = coreData / raw
                let verdict = ratio <= result.workload.target ? "met" : "**missed**"
                line += " \(String(format: "%.2f×", ratio)) | ≤ \(String(format: "%.1f×", result.workload.target)) \(verdict) |"
            }
            if hasRaw && hasGRDB { line += " \(String(format: "%.2f×", grdb / raw)) |" }
            if hasRaw && hasStatements { line += " \(String(format: "%.2f×", result.median(.grdbStatements) / raw)) |" }
            if hasGRDB && hasCoreData { line += " \(String(format: "%.2f×", coreData / grdb)) |" }
            lines.append(line)
        }
        lines.append("")
        lines.append("Per row (median time / rows):")
        lines.append("")
        lines.append("| workload |" + engines.map { " \($0.title) |" }.joined())
        lines.append("|---|" + String(repeating: "---:|", count: engines.count))
        for result in results {
            lines.append("| \(result.workload.title) |" + engines.map { " \(String(format: "%.2f µs", result.median($0) / Double(result.size) * 1e6)) |" }.joined())
        }
        lines.append("")
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

    static func time(_ seconds: Double) -> String {
        let ms = seconds * 1000
        if ms >= 1000 { return String(format: "%.3f s", seconds) }
        if ms >= 100 { return String(format: "%.0f ms", ms) }
        if ms >= 10 { return String(format: "%.1f ms", ms) }
        return String(format: "%.2f ms", ms)
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

    /// The median time of an engine's repetitions (the mean of the middle two for an even count).
    func median(_ engine: BenchEngine) -> Double {
        let times = samples[engine, default: []].map(\.seconds).sorted()
        guard !times.isEmpty else { return .nan }
        let middle = times.count / 2
        return times.count % 2 == 1 ? times[middle] : (times[middle - 1] + times[middle]) / 2
    }
}
