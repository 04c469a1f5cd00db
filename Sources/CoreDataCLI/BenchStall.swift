import CoreData
import Foundation

/// The stall benchmark (`coredata bench --workload stall`): does the main queue keep ticking while
/// a background context imports?
///
/// A probe on the main queue is due every millisecond and records how late it runs. Meanwhile a
/// private-queue context imports `objects` items in saves of `batch`, and after each save the
/// main-queue view context fetches the newest 50. Two stacks:
/// - **sibling**: the background context sits on the coordinator next to the view context, which
///   merges its saves automatically (`automaticallyMergesChangesFromParent`);
/// - **child of view**: the background context is a child of the view context; each of its saves
///   goes into the view context, which then saves to the store on the main queue.
///
/// Target (issue 3): p99 lateness ≤ 16 ms and maximum ≤ 50 ms for the sibling stack.
enum StallBench {
    enum Stack: String, CaseIterable {
        case sibling = "sibling background context"
        case childOfView = "child of the view context"
    }

    struct Result {
        let stack: Stack
        let objects: Int
        let saves: Int
        let seconds: Double
        /// Lateness of each probe tick while the import ran, in milliseconds.
        let lateness: [Double]
        /// Lateness measured with nothing else running, for comparison.
        let idleLateness: [Double]

        func percentile(_ p: Double, of samples: [Double]) -> Double {
            guard !samples.isEmpty else { return 0 }
            let sorted = samples.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
        }
    }

    /// Runs both stacks. Call on the main thread: it drives the main run loop while the import runs.
    static func run(objects: Int, batch: Int, folder: BenchFolder, progress: (String) -> Void) throws -> [Result] {
        precondition(Thread.isMainThread, "the stall benchmark drives the main run loop")
        var results: [Result] = []
        for stack in Stack.allCases {
            progress("stall, \(stack.rawValue): \(objects) objects in saves of \(batch)…")
            results.append(try measure(stack, objects: objects, batch: batch, folder: folder))
        }
        return results
    }

    /// Ticks of the main-queue probe.
    private final class Probe: @unchecked Sendable {
        private let lock = NSLock()
        private var samples: [Double] = []
        private var expected: DispatchTime = .now()
        private var timer: DispatchSourceTimer?
        private let interval = DispatchTimeInterval.milliseconds(1)

        func start() {
            let timer = DispatchSource.makeTimerSource(flags: .strict, queue: .main)
            expected = .now() + interval
            timer.schedule(deadline: expected, repeating: interval, leeway: .nanoseconds(0))
            timer.setEventHandler { [self] in tick() }
            self.timer = timer
            timer.resume()
        }

        private func tick() {
            let now = DispatchTime.now()
            let late = now.uptimeNanoseconds > expected.uptimeNanoseconds ? now.uptimeNanoseconds - expected.uptimeNanoseconds : 0
            lock.withLock { samples.append(Double(late) / 1e6) }
            expected = now + interval
        }

        func stop() -> [Double] {
            timer?.cancel()
            timer = nil
            return lock.withLock { samples }
        }
    }

    /// Turns the main run loop (which drains the main queue on Linux) until `done` is set.
    private static func runMainLoop(until done: Flag) {
        while !done.isSet {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.005))
        }
    }

    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        private var failure: Error?
        var isSet: Bool { lock.withLock { value } }
        func set(_ error: Error? = nil) { lock.withLock { value = true; failure = error } }
        var error: Error? { lock.withLock { failure } }
    }

    private static func measure(_ kind: Stack, objects: Int, batch: Int, folder: BenchFolder) throws -> Result {
        // The probe alone first: the timer's own jitter on this machine.
        let idleProbe = Probe()
        idleProbe.start()
        let idleDone = Flag()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { idleDone.set() }
        runMainLoop(until: idleDone)
        let idle = idleProbe.stop()

        let model = CoreDataBench.itemModel(className: "NSManagedObject")
        // "The newest 50" is a query on an indexed column, as an app's timestamp would be.
        (model.entitiesByName["Item"]!.propertiesByName["i0"] as! NSAttributeDescription).isIndexed = true
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: folder.freshFile("stall"), options: nil)
        let view = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        view.persistentStoreCoordinator = coordinator
        let background = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        switch kind {
        case .sibling:
            view.automaticallyMergesChangesFromParent = true
            background.persistentStoreCoordinator = coordinator
        case .childOfView:
            background.parent = view
        }

        let probe = Probe()
        probe.start()
        let done = Flag()
        let saves = (objects + batch - 1) / batch
        let start = Date()
        Thread.detachNewThread {
            do {
                var next = 0
                for _ in 0..<saves {
                    let count = min(batch, objects - next)
                    let first = next
                    try background.performAndWait {
                        for serial in first..<(first + count) {
                            let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: background)
                            item.setValue(Int64(serial), forKey: "i0")
                        }
                        try background.save()
                    }
                    next += count
                    // The UI's turn: show the newest 50 (and, for the child stack, save to the store).
                    view.perform {
                        if kind == .childOfView { try? view.save() }
                        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
                        request.sortDescriptors = [NSSortDescriptor(key: "i0", ascending: false)]
                        request.fetchLimit = 50
                        _ = try? view.fetch(request).map { $0.value(forKey: "i0") }
                    }
                }
                view.performAndWait {} // wait for the main queue to catch up
                done.set()
            } catch {
                done.set(error)
            }
        }
        runMainLoop(until: done)
        let seconds = Date().timeIntervalSince(start)
        let lateness = probe.stop()
        if let error = done.error { throw error }
        let stored = try background.performAndWait { () throws -> Int in
            kind == .sibling ? try background.count(for: NSFetchRequest<NSManagedObject>(entityName: "Item")) : objects
        }
        guard stored == objects else { throw BenchFailure("stall: \(stored) items stored, expected \(objects)") }
        return Result(stack: kind, objects: objects, saves: saves, seconds: seconds, lateness: lateness, idleLateness: idle)
    }

    /// The report's section.
    static func report(_ results: [Result]) -> [String] {
        func ms(_ value: Double) -> String { String(format: value < 10 ? "%.2f ms" : "%.1f ms", value) }
        var lines = [
            "### Main-queue stalls during a background import",
            "",
            "A main-queue probe due every 1 ms records how late it runs while a private-queue context imports in saves, and the view context fetches the newest 50 after each save. Target for the sibling stack: p99 ≤ 16 ms, maximum ≤ 50 ms.",
            "",
            "| stack | objects | saves | import time | ticks | p50 late | p99 late | max late | target | idle p99 / max |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for result in results {
            let p50 = result.percentile(0.50, of: result.lateness), p99 = result.percentile(0.99, of: result.lateness)
            let maximum = result.lateness.max() ?? 0
            let target: String
            if result.stack == .sibling {
                target = p99 <= 16 && maximum <= 50 ? "met" : "**missed**"
            } else {
                target = "—"
            }
            lines.append("| \(result.stack.rawValue) | \(result.objects.formatted()) | \(result.saves) | \(String(format: "%.2f s", result.seconds)) | \(result.lateness.count) | \(ms(p50)) | \(ms(p99)) | \(ms(maximum)) | \(target) | \(ms(result.percentile(0.99, of: result.idleLateness))) / \(ms(result.idleLateness.max() ?? 0)) |")
        }
        return lines
    }
}
