import Foundation
import Testing
@testable import CoreData
@testable import CoreDataPostgreSQL
import TestSupport

/// Issue 26's load test: 4 processes, each with 4 contexts on its coordinator, write the same
/// rows at once for a fixed number of rounds, under each merge policy.
///
/// Four `Counter` rows have a column per writer (`c0`…`c15`, writer = process × 4 + context).
/// In round r every writer sets its own column of all four rows to r in one save, so every save
/// changes rows other writers change too: optimistic-locking conflicts, and, in the contexts'
/// orders, crossing row locks. Exact at the end:
/// - every save committed once per row: each row's `Z_OPT` is 1 + writers × rounds (a save
///   refused by the error policy or by endless new conflicts (133020), or whose change the
///   rollback policy dropped, is written again; nothing is written twice);
/// - no update is lost: every writer's column is `rounds`, except under the overwrite policy,
///   whose rule is that a save writes whole rows (other writers' columns as it last read them,
///   so a column may even be back to 0);
/// - no deadlock: the server counted none once every session had ended, and no save failed;
/// - the policy was exercised: the processes met save conflicts (the policy's resolutions, or
///   under the error policy its refusals, 133020), more than none over all of them;
/// - every process's view context converged through remote-change notifications alone (its
///   objects, read once before the writes, merged from persistent history) to the rows in the
///   database.
@Suite("PostgreSQL load", PostgreSQLTestServer.skipUnlessServer, .serialized)
struct PostgreSQLLoadTests {
    static let processes = 4
    static let contextsPerProcess = 4
    static let rounds = 5
    static let rows = 4
    static var writers: Int { processes * contextsPerProcess }

    static var options: [AnyHashable: Any] { [NSPersistentHistoryTrackingKey: true as NSNumber,
                                              NSPersistentStoreRemoteChangeNotificationPostOptionKey: true as NSNumber] }

    /// `Counter`: a `name`, and an `Integer 64` column per writer.
    static func model() -> NSManagedObjectModel {
        let counter = NSEntityDescription()
        counter.name = "Counter"
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        counter.properties = [name] + (0..<writers).map { writer in
            let column = NSAttributeDescription()
            column.name = "c\(writer)"
            column.attributeType = .integer64AttributeType
            column.defaultValue = 0
            return column
        }
        let model = NSManagedObjectModel()
        model.entities = [counter]
        return model
    }

    static func policy(_ name: String) -> Any {
        switch name {
        case "error": NSErrorMergePolicy
        case "objectTrump": NSMergeByPropertyObjectTrumpMergePolicy
        case "storeTrump": NSMergeByPropertyStoreTrumpMergePolicy
        case "overwrite": NSOverwriteMergePolicy
        default: NSRollbackMergePolicy
        }
    }

    @Test(arguments: ["error", "objectTrump", "storeTrump", "overwrite", "rollback"])
    func fourProcessesOfFourContextsWriteTheSameRows(_ policy: String) throws {
        let database = try TemporaryDatabase()
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = try database.coordinator(Self.model(), options: Self.options)
        try context.performAndWait {
            for row in 0..<Self.rows { context.insert("Counter", ["name": "row \(row)"]) }
            try context.save()
        }
        // The processes: this test binary again, running only `aLoadTestProcess`, all four
        // started before any is waited for. (Exit tests, which this used before, were sometimes
        // started one after another on a loaded machine: the first then waited in vain for the
        // others' saves.) Each writes what it says to a file, shown when it fails.
        let logs = try TemporaryFolder()
        var children: [(process: Process, log: URL)] = []
        for process in 0..<Self.processes {
            let log = logs.url.appendingPathComponent("process-\(process).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let output = try FileHandle(forWritingTo: log)
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["--testing-library", "swift-testing", "--filter", "aLoadTestProcess"]
            var environment = ProcessInfo.processInfo.environment
            environment[LoadTestProcess.environmentKey] = [database.url.absoluteString, policy, String(process)].joined(separator: "\n")
            child.environment = environment
            child.standardOutput = output
            child.standardError = output
            try child.run()
            children.append((child, log))
        }
        var conflicts = 0
        for (process, child) in children.enumerated() {
            child.process.waitUntilExit()
            let output = FileManager.default.contents(atPath: child.log.path).map { String(decoding: $0, as: UTF8.self) } ?? ""
            if child.process.terminationReason != .exit || child.process.terminationStatus != 0 {
                Issue.record("process \(process) (\(policy)) ended with \(child.process.terminationReason == .exit ? "status" : "signal") \(child.process.terminationStatus); what it wrote ends: \(output.suffix(6000))")
            }
            conflicts += LoadTestProcess.conflicts(reportedIn: Array(output.utf8))
        }
        #expect(conflicts > 0, "no process met a save conflict: the \(policy) policy was not exercised")
        let columns = (0..<Self.writers).map { "\"ZC\($0)\"" }.joined(separator: ", ")
        for row in try database.query("SELECT \"Z_OPT\", \(columns) FROM \"ZCOUNTER\"") {
            #expect(row[0] == String(1 + Self.writers * Self.rounds), "a save was lost or written twice")
            let values = row.dropFirst().map { Int($0 ?? "") ?? -1 }
            if policy == "overwrite" {
                #expect(values.allSatisfy { (0...Self.rounds).contains($0) }, "\(values)")
            } else {
                #expect(values == Array(repeating: Self.rounds, count: Self.writers), "an update was lost: \(values)")
            }
        }
        #expect(try database.deadlocksCounted(removingTheStoresOf: [context]) == 0)
    }
}

extension PostgreSQLLoadTests {
    /// One process of ``fourProcessesOfFourContextsWriteTheSameRows(_:)``: runs only in the
    /// processes that test starts (``LoadTestProcess/environmentKey`` set), and does nothing
    /// elsewhere.
    @Test(.enabled(if: LoadTestProcess.childArguments != nil))
    func aLoadTestProcess() throws {
        guard let (url, policy, process) = LoadTestProcess.childArguments else { return }
        try LoadTestProcess(url: url, policy: policy, process: process).run()
    }
}

/// One process of the load test (a process of its own, started by the test): a coordinator,
/// four writing contexts and a view context that merges the other processes' saves.
struct LoadTestProcess {
    let url: String
    let policy: String
    let process: Int

    /// The environment variable that makes a run of the test binary one process of the load
    /// test: the database's URL, the policy's name and the process's number, a line each.
    static let environmentKey = "COREDATA_LOAD_TEST_PROCESS"

    /// The URL, policy and number of this process, when it is one of the load test's.
    static var childArguments: (url: String, policy: String, process: Int)? {
        guard let lines = ProcessInfo.processInfo.environment[environmentKey]?.split(separator: "\n").map(String.init),
              lines.count == 3, let process = Int(lines[2]) else { return nil }
        return (lines[0], lines[1], process)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes a step of the process, timed, to its standard error (kept when a process fails).
    private func log(_ step: String) {
        FileHandle.standardError.write(Data("\(Date().timeIntervalSince1970) process \(process): \(step)\n".utf8))
    }

    func run() throws {
        log("started")
        NSPersistentStoreCoordinator.registerPostgreSQLStore()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PostgreSQLLoadTests.model())
        try coordinator.addPersistentStore(ofType: NSPostgreSQLStoreType, configurationName: nil, at: URL(string: url)!,
                                           options: PostgreSQLLoadTests.options)
        let view = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        view.persistentStoreCoordinator = coordinator
        let merger = RemoteChangeMerger(view: view, coordinator: coordinator)
        let viewed = try view.performAndWait {
            let objects = try view.objects("Counter", sortedBy: "name")
            for object in objects { _ = object.value(forKey: "c0") } // read now: later values can only come from merges
            return objects
        }

        let failures = Locked<[String]>([])
        let done = DispatchGroup()
        let mergePolicy = CountingMergePolicy(merge: (PostgreSQLLoadTests.policy(policy) as! NSMergePolicy).mergeType)
        for index in 0..<PostgreSQLLoadTests.contextsPerProcess {
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            context.mergePolicy = mergePolicy
            done.enter()
            context.perform {
                do {
                    try write(context, writer: process * PostgreSQLLoadTests.contextsPerProcess + index)
                } catch {
                    failures.withLock { $0.append("writer \(index): \(error)") }
                }
                done.leave()
            }
        }
        done.wait()
        log("its writers are done")
        if let failure = failures.withLock({ $0.first }) { throw Failure(description: failure) }

        // Every process has written everything once each row's Z_OPT counts every save.
        let expectedVersion = 1 + PostgreSQLLoadTests.writers * PostgreSQLLoadTests.rounds
        let columns = (0..<PostgreSQLLoadTests.writers).map { "\"ZC\($0)\"" }.joined(separator: ", ")
        let connection = try LibPQConnection(url: URL(string: url)!, password: nil)
        defer { connection.close() }
        var final: [[Int64]] = []
        var lastSeen = Date.distantPast
        try wait("every process's saves") {
            let rows = try connection.execute("SELECT \"Z_OPT\", \(columns) FROM \"ZCOUNTER\" ORDER BY \"ZNAME\"", [])
            if Date().timeIntervalSince(lastSeen) > 20 { // what it sees, now and then (for a failure's story)
                lastSeen = Date()
                log("rows' Z_OPT \((0..<rows.count).map { rows.int64($0, 0) }) of \(expectedVersion)")
            }
            guard (0..<rows.count).allSatisfy({ rows.int64($0, 0) == expectedVersion }) else { return false }
            final = (0..<rows.count).map { row in (0..<PostgreSQLLoadTests.writers).map { rows.int64(row, $0 + 1) } }
            return true
        }
        try wait("the view context's convergence through remote changes") {
            view.performAndWait {
                viewed.map { object in (0..<PostgreSQLLoadTests.writers).map { object.value(forKey: "c\($0)") as? Int64 ?? -1 } } == final
            }
        }
        log("every process's saves are in the rows; its view converged")
        guard merger.merged > 0 else { throw Failure(description: "no remote change was merged") }
        // An orderly end before the process exits: the store removed (its listener thread stops)
        // and the view's queued merges drained, so that no thread still uses libpq or Foundation
        // while `exit` tears them down.
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        view.performAndWait {}
        withExtendedLifetime(merger) {}
        FileHandle.standardOutput.write(Data("\(Self.conflictsLabel)\(mergePolicy.conflictsMet)\n".utf8))
    }

    /// The line a process writes to its standard output: how many save conflicts it met.
    static let conflictsLabel = "save conflicts met: "

    /// The save conflicts a process reported on its standard output (`output`).
    static func conflicts(reportedIn output: [UInt8]) -> Int {
        let line = String(decoding: output, as: UTF8.self).split(separator: "\n").last { $0.hasPrefix(conflictsLabel) }
        return line.flatMap { Int($0.dropFirst(conflictsLabel.count)) } ?? 0
    }

    /// `rounds` saves: in round r, this writer's column of every row becomes r. A save the error
    /// policy refuses, or whose changes the rollback policy dropped, is written again.
    private func write(_ context: NSManagedObjectContext, writer: Int) throws {
        let key = "c\(writer)"
        let objects = try context.objects("Counter", sortedBy: "name")
        for round in 1...Int64(PostgreSQLLoadTests.rounds) {
            var attempts = 0
            while true {
                attempts += 1
                guard attempts <= 50 else { throw Failure(description: "\(key) round \(round): 50 attempts") }
                for object in objects where object.value(forKey: key) as? Int64 != round { object.setValue(round, forKey: key) }
                do {
                    try context.save()
                } catch let error as NSError where error.code == NSManagedObjectMergeError {
                    // The error policy's refusal; or, under any policy, a save that met new
                    // conflicts at each of its attempts to merge (nothing was saved): again.
                    if policy == "error" {
                        context.rollback()
                        context.refreshAllObjects()
                    }
                    continue
                }
                if objects.allSatisfy({ $0.value(forKey: key) as? Int64 == round }) { break }
                guard policy == "rollback" else { throw Failure(description: "\(key) round \(round): the \(policy) policy dropped a change") }
            }
        }
    }

    /// Waits up to 180 s for `condition`. (The first process to finish waits for the others'
    /// saves: on a loaded 2-core machine they took more than 30 s, the limit this had before.)
    private func wait(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(180)
        while try !condition() {
            guard Date() < deadline else { throw Failure(description: "timed out waiting for \(what)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}

/// A merge policy of `mergeType` that counts the save conflicts it meets (each save attempt
/// whose optimistic-locking conflicts it is given, the error policy's refusals included), then
/// applies its type's rule.
final class CountingMergePolicy: NSMergePolicy, @unchecked Sendable {
    private let count = Locked<Int>(0)

    /// The conflicts met so far.
    var conflictsMet: Int { count.withLock { $0 } }

    override func resolve(optimisticLockingConflicts list: [NSMergeConflict]) throws {
        count.withLock { $0 += 1 }
        try super.resolve(optimisticLockingConflicts: list)
    }
}

/// Merges every remote change a coordinator posts into a view context: the history after the
/// last merged token, each transaction's object IDs (`objectIDNotification()`).
final class RemoteChangeMerger: @unchecked Sendable {
    private var observer: NSObjectProtocol?
    private let state = Locked<(token: NSPersistentHistoryToken?, merged: Int)>((nil, 0))

    /// How many transactions were merged.
    var merged: Int { state.withLock { $0.merged } }

    init(view: NSManagedObjectContext, coordinator: NSPersistentStoreCoordinator) {
        state.withLock { $0.token = coordinator.currentPersistentHistoryToken(fromStores: nil) }
        observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreRemoteChange, object: coordinator, queue: nil) {
            [state] _ in
            view.perform {
                let request = NSPersistentHistoryChangeRequest.fetchHistory(after: state.withLock { $0.token })
                guard let result = try? view.execute(request) as? NSPersistentHistoryResult,
                      let transactions = result.result as? [NSPersistentHistoryTransaction] else { return }
                for transaction in transactions { view.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
                if let last = transactions.last {
                    state.withLock { $0 = (last.token, $0.merged + transactions.count) }
                }
            }
        }
    }

    deinit { if let observer { NotificationCenter.default.removeObserver(observer) } }
}
