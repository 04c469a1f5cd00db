import Foundation
import Testing
@testable import CoreData

/// Eight threads, each with its own context on one coordinator, insert, update and delete
/// overlapping objects in a shared SQLite store under each merge policy, while a view context
/// merges their saves automatically. Afterwards the store holds exactly what the policy's rules
/// predict, no save was lost, nothing deadlocked (time limit), and — the suite running with
/// `COREDATA_CONCURRENCY_DEBUG=1` — no context was touched off its queue.
///
/// Workers share ten `Counter` objects; worker `w` only ever increments attribute `w<w>`, so every
/// save of a counter meets other workers' saves (optimistic-locking conflicts), but no two workers
/// change the same property. Each worker also inserts `Note`s and deletes some of its own.
@Suite("Stress: concurrent contexts and merge policies", .serialized)
struct StressTests {
    static let workers = 8
    static let rounds = 80
    static let counters = 10

    static func model() -> NSManagedObjectModel {
        let counter = NSEntityDescription()
        counter.name = "Counter"
        counter.properties = [attribute("key", .stringAttributeType)] + (0..<workers).map { attribute("w\($0)", .integer64AttributeType) }
        let note = NSEntityDescription()
        note.name = "Note"
        note.properties = [attribute("worker", .integer64AttributeType), attribute("serial", .integer64AttributeType)]
        let model = NSManagedObjectModel()
        model.entities = [counter, note]
        return model
    }

    /// What one worker did: the value of its attribute it last saw committed on each counter, and
    /// the notes it kept.
    struct Outcome: Sendable {
        var counterValues: [String: Int64] = [:]
        /// The highest value of its attribute it ever saw committed on each counter.
        var highestValues: [String: Int64] = [:]
        var keptNotes: Set<Int64> = []
        var failedSaves = 0
        var errors: [String] = []
    }

    static let policies: [(String, NSMergePolicyType)] = [
        ("error", .errorMergePolicyType), ("store trump", .mergeByPropertyStoreTrumpMergePolicyType),
        ("object trump", .mergeByPropertyObjectTrumpMergePolicyType), ("overwrite", .overwriteMergePolicyType),
        ("rollback", .rollbackMergePolicyType),
    ]

    @Test(.timeLimit(.minutes(2)), arguments: 0..<policies.count)
    func eightWritersAndAViewContext(policyIndex: Int) throws {
        let (policyName, policyType) = Self.policies[policyIndex]
        let stack = try TestStack(model: Self.model())
        for index in 0..<Self.counters {
            stack.insert("Counter", ["key": "c\(index)"])
        }
        try stack.context.save()

        let view = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        view.persistentStoreCoordinator = stack.coordinator
        view.automaticallyMergesChangesFromParent = true
        let viewCounters = try view.performAndWait { try view.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter")) }

        let outcomes = OutcomeBox(count: Self.workers)
        let coordinator = stack.coordinator
        let group = DispatchGroup()
        for worker in 0..<Self.workers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                outcomes.set(worker, Self.work(worker, coordinator: coordinator, policy: NSMergePolicy(merge: policyType)))
            }
        }
        #expect(group.wait(timeout: .now() + 90) == .success, "\(policyName): the workers finished (no deadlock)")

        // The store, read by a fresh stack.
        let check = try stack.reopen()
        let counters = try check.fetch("Counter")
        #expect(counters.count == Self.counters, "\(policyName): no counter lost")
        for worker in 0..<Self.workers {
            let outcome = outcomes.get(worker)
            let key = "w\(worker)"
            for counter in counters {
                let name = counter.value(forKey: "key") as! String
                let stored = (counter.value(forKey: key) as? Int64) ?? 0
                if policyType == .overwriteMergePolicyType {
                    // Overwrite writes whole objects: another worker's stale copy may win, but never
                    // with a value this worker did not reach.
                    #expect(stored <= outcome.highestValues[name, default: 0], "\(policyName): \(name).\(key)")
                } else {
                    // Only this worker writes `key`: the store holds the last value it saw committed.
                    #expect(stored == outcome.counterValues[name, default: 0], "\(policyName): \(name).\(key)")
                }
            }
            let notes = try check.fetch("Note") { $0.predicate = NSPredicate(format: "worker == %d", worker) }
            #expect(Set(notes.compactMap { $0.value(forKey: "serial") as? Int64 }) == outcome.keptNotes, "\(policyName): worker \(worker)'s notes")
        }
        if policyType == .errorMergePolicyType {
            #expect((0..<Self.workers).map { outcomes.get($0).failedSaves }.reduce(0, +) > 0, "conflicts happened and were reported")
        } else {
            let errors = (0..<Self.workers).flatMap { outcomes.get($0).errors }
            #expect(errors.isEmpty, "\(policyName): every save succeeded; failures: \(errors)")
        }

        // The view context merged every save: after its queue drains, it agrees with the store.
        let stored = Dictionary(uniqueKeysWithValues: counters.map { ($0.value(forKey: "key") as! String, $0.committedValues(forKeys: nil)) })
        view.performAndWait {
            for counter in viewCounters {
                let name = counter.value(forKey: "key") as! String
                for worker in 0..<Self.workers {
                    let key = "w\(worker)"
                    #expect((counter.value(forKey: key) as? Int64 ?? 0) == (stored[name]?[key] as? Int64 ?? 0),
                            "\(policyName): the view context merged \(name).\(key)")
                }
            }
        }
    }

    /// One worker's rounds: increment its attribute on three counters, insert two notes and
    /// delete one of its older ones, save.
    static func work(_ worker: Int, coordinator: NSPersistentStoreCoordinator, policy: NSMergePolicy) -> Outcome {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        context.mergePolicy = policy
        let key = "w\(worker)"
        var outcome = Outcome()
        var serial: Int64 = 0
        var generator = SystemRandomNumberGenerator()
        context.performAndWait {
            for round in 0..<rounds {
                do {
                    let counters = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter"))
                    for counter in counters.shuffled(using: &generator).prefix(3) {
                        counter.setValue(((counter.value(forKey: key) as? Int64) ?? 0) + 1, forKey: key)
                    }
                    for _ in 0..<2 {
                        serial += 1
                        let note = NSEntityDescription.insertNewObject(forEntityName: "Note", into: context)
                        note.setValue(Int64(worker), forKey: "worker")
                        note.setValue(serial, forKey: "serial")
                    }
                    if round % 3 == 2 {
                        let request = NSFetchRequest<NSManagedObject>(entityName: "Note")
                        request.predicate = NSPredicate(format: "worker == %d", worker)
                        request.sortDescriptors = [NSSortDescriptor(key: "serial", ascending: true)]
                        request.fetchLimit = 1
                        if let oldest = try context.fetch(request).first { context.delete(oldest) }
                    }
                    let written = counters.filter(\.hasChanges).map { ($0.value(forKey: "key") as! String, ($0.value(forKey: key) as? Int64) ?? 0) }
                    try context.save()
                    for (name, value) in written where policy.mergeType == .overwriteMergePolicyType {
                        outcome.highestValues[name] = max(outcome.highestValues[name, default: 0], value)
                    }
                } catch {
                    outcome.failedSaves += 1
                    outcome.errors.append("\((error as NSError).code): \(error.localizedDescription)")
                    context.rollback()
                }
                // What this worker now knows is committed (its own attribute is written by it alone).
                for counter in (try? context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Counter"))) ?? [] where !counter.hasChanges {
                    context.refresh(counter, mergeChanges: false)
                    let name = counter.value(forKey: "key") as! String, value = (counter.value(forKey: key) as? Int64) ?? 0
                    outcome.counterValues[name] = value
                    outcome.highestValues[name] = max(outcome.highestValues[name, default: 0], value)
                }
            }
            let request = NSFetchRequest<NSManagedObject>(entityName: "Note")
            request.predicate = NSPredicate(format: "worker == %d", worker)
            outcome.keptNotes = Set(((try? context.fetch(request)) ?? []).compactMap { $0.value(forKey: "serial") as? Int64 })
        }
        return outcome
    }

    final class OutcomeBox: @unchecked Sendable {
        private let lock = NSLock()
        private var outcomes: [Outcome]
        init(count: Int) { outcomes = Array(repeating: Outcome(), count: count) }
        func set(_ index: Int, _ outcome: Outcome) { lock.withLock { outcomes[index] = outcome } }
        func get(_ index: Int) -> Outcome { lock.withLock { outcomes[index] } }
    }
}
