import ArgumentParser
import CoreData
import CoreDataExamples
import Foundation

/// `coredata demo`: seed 000's scenario end to end on a real SQLite store; `--magicalrecord` runs
/// it on MagicalRecord for Linux (`DemoMagicalRecord.swift`).
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run seed 000's CoreDataManager scenario: 10,000 inserts saved one by one and saved once, query, update, delete, reopen."
    )

    @Option(help: "The store file (default: a new file in a temporary folder).") var store: String?
    @Option(help: "How many cars to insert in each insert step.") var count = 10_000
    @Flag(help: "Run the scenario on MagicalRecord: its default stack and save blocks.") var magicalrecord = false

    func validate() throws {
        if count < 1 { throw ValidationError("--count must be at least 1") }
        if let store, store.contains("://") {
            throw ValidationError("--store takes a SQLite file's path; the demo does not run on \(StoreInspector.displayName(of: store))")
        }
    }

    func run() throws {
        let storeURL = store.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("coredata-demo-\(UUID().uuidString)/Car.sqlite")
        do {
            try run(on: storeURL)
        } catch let failure as CommandFailure {
            throw failure
        } catch let error as NSError {
            // One line, as `inspect` and `migrate` say theirs, not the error's whole dump.
            throw CommandFailure("The demo stopped on \(storeURL.path): \(error.localizedDescription) (\(error.domain) \(error.code))")
        }
    }

    private func run(on storeURL: URL) throws {
        let modelURL = CoreDataManager.bundledModelURL
        if magicalrecord {
            try MagicalRecordDemo(storeURL: storeURL, modelURL: modelURL, count: count).run()
            print("")
            print("Inspect the store: swift run coredata inspect \(storeURL.path)")
            return
        }
        print("swift-coredata demo: seed 000's CoreDataManager on Linux")
        print("model: \(modelURL.lastPathComponent) (Xcode source format)")
        print("store: \(storeURL.path)")
        print("")

        var manager = try CoreDataManager(modelURL: modelURL, storeURL: storeURL)
        let names = (0..<count).map { String($0) }
        let existing = try manager.count()
        if existing > 0 { print("The store already holds \(existing) cars; the counts below include them.\n") }

        let oneByOne = try Self.step("insert \(count), save after each") {
            for name in names { try manager.insertData(name) }
            return try manager.count()
        }
        try Self.step("delete all") { try manager.deleteData() }
        let once = try Self.step("insert \(count), one save") {
            try manager.insertDatas(names)
            return try manager.count()
        }
        var inOrder = false
        try Self.step("query all (order kept?)") {
            let fetched = try manager.queryData()
            inOrder = Array(fetched.suffix(names.count)) == names
            return fetched.count
        }
        print("    order after the one-save insert: \(inOrder ? "insertion order kept" : "SCRAMBLED")")
        let probe = names[names.count / 2]
        try Self.step("query name = \"\(probe)\"") { try manager.queryData(probe).count }
        try Self.step("update name = \"\(probe)\" to \"test\"") { try manager.updateData(probe) }
        try Self.step("query name = \"test\"") { try manager.queryData("test").count }
        try Self.step("delete name = \"test\"") { try manager.deleteData("test") }
        try Self.step("reopen the store and count") {
            manager = try CoreDataManager(modelURL: modelURL, storeURL: storeURL)
            return try manager.count()
        }
        print("")
        print("Insert timings beside seed 000's (an iOS device, 2016):")
        print("    save after each insert: \(Self.seconds(oneByOne))   (seed: 8.408 s)")
        print("    one save:               \(Self.seconds(once))   (seed: 0.162 s, with scrambled order)")
        print("")
        print("Inspect the store: swift run coredata inspect \(storeURL.path)")
    }

    @discardableResult
    static func step(_ title: String, _ body: () throws -> Int) throws -> Double {
        let start = DispatchTime.now()
        let result = try body()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        print("  \(StoreInspector.pad(title, 42)) \(StoreInspector.pad("\(result)", 8)) \(Self.seconds(elapsed))")
        return elapsed
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }
}
