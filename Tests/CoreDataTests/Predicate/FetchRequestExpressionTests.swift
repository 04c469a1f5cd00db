import Foundation
import Testing
@testable import CoreData

/// `NSFetchRequestExpression`: a fetch run on a context as an expression, in predicates the
/// stores compile and in memory.
@Suite("NSFetchRequestExpression")
struct FetchRequestExpressionTests {
    /// Ada (36) owns the Model T and the Zoë; Grace (85) the Beetle; Linus (54) nothing; the
    /// Trabant has no owner.
    private func populate(_ stack: TestStack) throws {
        let ada = stack.insert("Person", ["name": "Ada", "age": 36])
        let grace = stack.insert("Person", ["name": "Grace", "age": 85])
        stack.insert("Person", ["name": "Linus", "age": 54])
        for (name, owner) in [("Model T", ada), ("Zoë", ada), ("Beetle", grace), ("Trabant", nil)] as [(String, NSManagedObject?)] {
            let car = stack.insert("Car", ["name": name])
            if let owner { car.setValue(owner, forKey: "owner") }
        }
        try stack.context.save()
    }

    private func people(_ format: String) -> NSFetchRequest<NSFetchRequestResult> {
        let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Person")
        request.predicate = NSPredicate(format: format)
        return request
    }

    private func fetchExpression(_ request: NSFetchRequest<NSFetchRequestResult>, in context: NSManagedObjectContext,
                                 countOnly: Bool = false) -> CoreData.NSExpression {
        NSFetchRequestExpression.expression(forFetch: NSExpression(forConstantValue: request),
                                            context: NSExpression(forConstantValue: context), countOnly: countOnly)
    }

    private func carNames(_ stack: TestStack, _ predicate: NSPredicate) throws -> [String] {
        try stack.fetch("Car") { $0.predicate = predicate }.compactMap { $0.value(forKey: "name") as? String }.sorted()
    }

    private static let kinds: [String] = ["SQLite", "in-memory"] + (TestStoreKind.available.contains(.postgreSQL) ? ["PostgreSQL"] : [])

    private func stack(_ kind: String) throws -> TestStack {
        switch kind {
        case "in-memory": return try TestStack(inMemory: true)
        case "PostgreSQL": return try TestStack(.postgreSQL)
        default: return try TestStack()
        }
    }

    @Test("IN a fetch's objects: the stores and in-memory evaluation agree", arguments: kinds)
    func objectsSubquery(kind: String) throws {
        let stack = try stack(kind)
        try withExtendedLifetime(stack) {
            try populate(stack)
            let older = fetchExpression(people("age > 40"), in: stack.context)
            let predicate = NSPredicate(format: "owner IN %@", older)
            #expect(try carNames(stack, predicate) == ["Beetle"])
            let all = try stack.fetch("Car")
            #expect(all.filter { predicate.evaluate(with: $0) }.compactMap { $0.value(forKey: "name") as? String } == ["Beetle"])
            // The same as a comparison predicate built from expressions, and negated.
            let comparison = NSComparisonPredicate(leftExpression: NSExpression(forKeyPath: "owner"), rightExpression: older,
                                                   modifier: .direct, type: .in)
            #expect(try carNames(stack, comparison) == ["Beetle"])
            let notOlder = NSPredicate(format: "owner != nil AND NOT (owner IN %@)", older)
            #expect(try carNames(stack, notOlder) == ["Model T", "Zoë"])
            // Object IDs as results work as the objects do.
            let ids = people("age < 40")
            ids.resultType = .managedObjectIDResultType
            #expect(try carNames(stack, NSPredicate(format: "owner IN %@", fetchExpression(ids, in: stack.context))) == ["Model T", "Zoë"])
        }
    }

    @Test("A count-only fetch is a number in a comparison, and its expression's value", arguments: kinds)
    func countOnly(kind: String) throws {
        let stack = try stack(kind)
        try withExtendedLifetime(stack) {
            try populate(stack)
            let count = fetchExpression(people("age > 40"), in: stack.context, countOnly: true)
            #expect(count.expressionValue(with: nil, context: nil) as? Int == 2)
            #expect(try carNames(stack, NSPredicate(format: "%@ == 2 AND name BEGINSWITH 'B'", count)) == ["Beetle"])
            #expect(try carNames(stack, NSPredicate(format: "%@ > 2", count)).isEmpty)
            let objects = fetchExpression(people("age > 40"), in: stack.context)
            let fetched = try #require(objects.expressionValue(with: nil, context: nil) as? [NSManagedObject])
            #expect(fetched.compactMap { $0.value(forKey: "name") as? String }.sorted() == ["Grace", "Linus"])
        }
    }

    @Test("A dictionary result of one property stands for its values, as a SQL subquery's column", arguments: kinds)
    func oneColumn(kind: String) throws {
        let stack = try stack(kind)
        try withExtendedLifetime(stack) {
            try populate(stack)
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["name"]
            request.predicate = NSPredicate(format: "owner.name == 'Ada'")
            let names = fetchExpression(request, in: stack.context)
            // The expression's own value is the dictionaries, as fetch(_:) returns them.
            #expect((names.expressionValue(with: nil, context: nil) as? [[String: Any]])?.count == 2)
            #expect(try carNames(stack, NSPredicate(format: "name IN %@", names)) == ["Model T", "Zoë"])
        }
    }

    @Test("A one-column result leaves nil values out; key paths from a fetch are read on its context", arguments: kinds)
    func nilsAndKeyPaths(kind: String) throws {
        let stack = try stack(kind)
        try withExtendedLifetime(stack) {
            try populate(stack)
            stack.insert("Car", ["year": 1990]) // no name
            try stack.context.save()
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["name"]
            let names = fetchExpression(request, in: stack.context)
            #expect(try carNames(stack, NSPredicate(format: "name IN %@", names)) == ["Beetle", "Model T", "Trabant", "Zoë"])
            let owners = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
            owners.resultType = .dictionaryResultType
            owners.propertiesToFetch = ["owner"]
            owners.predicate = NSPredicate(format: "name BEGINSWITH 'B' OR name == nil")
            #expect(try carNames(stack, NSPredicate(format: "owner IN %@", fetchExpression(owners, in: stack.context))) == ["Beetle"])
            // `%@.name`: the people's names, read where the people live.
            let background = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            background.persistentStoreCoordinator = stack.coordinator
            let young = fetchExpression(people("age < 40"), in: background)
            let byName = NSPredicate(format: "owner.name IN %@.name", young)
            #expect(try carNames(stack, byName) == ["Model T", "Zoë"])
            let car = try #require(try stack.fetch("Car") { $0.predicate = NSPredicate(format: "name == 'Zoë'") }.first)
            #expect(byName.evaluate(with: car))
        }
    }

    @Test("A child context's fetch runs the FETCH once, with the child's view, and a batch update takes one as a value")
    func childAndBatchUpdate() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            try populate(stack)
            let (parent, child) = stack.parentAndChild()
            try child.performAndWait {
                // An unsaved person of the child's owns an unsaved car.
                let ken = NSEntityDescription.insertNewObject(forEntityName: "Person", into: child)
                ken.setValue("Ken", forKey: "name")
                ken.setValue(80, forKey: "age")
                let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: child)
                car.setValue("Child's", forKey: "name")
                car.setValue(ken, forKey: "owner")
                let cars = NSFetchRequest<NSManagedObject>(entityName: "Car")
                cars.predicate = NSPredicate(format: "owner IN %@", fetchExpression(people("age > 60"), in: child))
                let names = try child.fetch(cars).compactMap { $0.value(forKey: "name") as? String }.sorted()
                #expect(names == ["Beetle", "Child's"])
            }
            withExtendedLifetime(parent) {}
            let update = NSBatchUpdateRequest(entityName: "Car")
            update.predicate = NSPredicate(format: "name == 'Trabant'")
            update.propertiesToUpdate = ["year": fetchExpression(people("age > 0"), in: stack.context, countOnly: true)]
            update.resultType = .updatedObjectsCountResultType
            #expect((try stack.context.execute(update) as? NSBatchUpdateResult)?.result as? Int == 1)
            #expect(try stack.rawRows("SELECT \"ZYEAR\" FROM \"ZCAR\" WHERE \"ZNAME\" = 'Trabant'") == [["3"]])
            // A FETCH's value is checked as a constant is: a count is not a string.
            let wrong = NSBatchUpdateRequest(entityName: "Car")
            wrong.propertiesToUpdate = ["name": fetchExpression(people("age > 0"), in: stack.context, countOnly: true)]
            let error = try #require(throws: NSError.self) { try stack.context.execute(wrong) }
            #expect(error.code == 1550)
            #expect(try stack.storedCarNames() == ["Beetle", "Model T", "Trabant", "Zoë"])
        }
    }

    @Test("A request whose predicate fetches itself throws instead of running without end")
    func cycle() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            try populate(stack)
            let first = people("age > 1"), second = people("age > 2")
            first.predicate = NSPredicate(format: "SELF IN %@", fetchExpression(second, in: stack.context))
            second.predicate = NSPredicate(format: "SELF IN %@", fetchExpression(first, in: stack.context))
            let error = try #require(throws: NSError.self) { try stack.context.fetch(first) }
            #expect(error.code == 134060)
            #expect(error.localizedDescription.contains("FETCH of itself"))
            #expect(first.description.contains("FETCH(<NSFetchRequest: "))
            #expect(first.description.contains(", entity: Person>, "))
        }
    }

    @Test("A fetched results controller keeps an object whose owner was unsaved at performFetch, after a save")
    func fetchedResultsController() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            try populate(stack)
            let ken = stack.insert("Person", ["name": "Ken", "age": 80])
            let kensCar = stack.insert("Car", ["name": "Ken's"])
            kensCar.setValue(ken, forKey: "owner")
            let cars = NSFetchRequest<NSManagedObject>(entityName: "Car")
            cars.predicate = NSPredicate(format: "owner IN %@", fetchExpression(people("age > 60"), in: stack.context))
            cars.sortDescriptors = [NSSortDescriptor(key: "name", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: cars, managedObjectContext: stack.context,
                                                        sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            let names = { (controller.fetchedObjects ?? []).compactMap { $0.value(forKey: "name") as? String } }
            #expect(names() == ["Beetle", "Ken's"])
            try stack.context.save() // Ken and his car get permanent IDs
            kensCar.setValue("Ken's too", forKey: "name")
            stack.context.processPendingChanges()
            #expect(names() == ["Beetle", "Ken's too"])
        }
    }

    @Test("The inner fetch sees the context's unsaved changes, as fetch(_:) does")
    func pendingChanges() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            try populate(stack)
            let ken = stack.insert("Person", ["name": "Ken", "age": 80])
            stack.insert("Car", ["name": "Unsaved"]).setValue(ken, forKey: "owner")
            let older = fetchExpression(people("age > 60"), in: stack.context)
            #expect(try carNames(stack, NSPredicate(format: "owner IN %@", older)) == ["Beetle", "Unsaved"])
        }
    }

    @Test("The inner fetch runs on its own context's queue")
    func otherQueue() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            try populate(stack)
            let background = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            background.persistentStoreCoordinator = stack.coordinator
            let ids = people("age > 40")
            ids.resultType = .managedObjectIDResultType
            let predicate = NSPredicate(format: "owner IN %@", fetchExpression(ids, in: background))
            #expect(try carNames(stack, predicate) == ["Beetle"])
        }
    }

    @Test("Batch requests run the fetch first")
    func batchDelete() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            try populate(stack)
            let cars = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
            cars.predicate = NSPredicate(format: "owner IN %@", fetchExpression(people("age < 40"), in: stack.context))
            let delete = NSBatchDeleteRequest(fetchRequest: cars)
            delete.resultType = .resultTypeCount
            let result = try #require(try stack.context.execute(delete) as? NSBatchDeleteResult)
            #expect(result.result as? Int == 2)
            #expect(try stack.storedCarNames() == ["Beetle", "Trabant"])
        }
    }

    @Test("A failing inner fetch makes the outer request throw its error; in memory it reads as nil")
    func errors() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            try populate(stack)
            let unknown = NSFetchRequest<NSFetchRequestResult>(entityName: "Spaceship")
            let bad = NSPredicate(format: "owner IN %@", fetchExpression(unknown, in: stack.context))
            let error = try #require(throws: NSError.self) { try carNames(stack, bad) }
            #expect(error.domain == NSCocoaErrorDomain)
            #expect(error.localizedDescription.contains("Spaceship"))
            let count = NSFetchRequest<NSFetchRequestResult>(entityName: "Car")
            count.predicate = bad
            #expect(throws: NSError.self) { try stack.context.count(for: count) }
            // Operands that are not a fetch request and a context.
            let wrong = NSFetchRequestExpression.expression(forFetch: NSExpression(forConstantValue: "Person"),
                                                            context: NSExpression(forConstantValue: stack.context), countOnly: false)
            let wrongError = try #require(throws: NSError.self) { try carNames(stack, NSPredicate(format: "owner IN %@", wrong)) }
            #expect(wrongError.code == 134060)
            #expect(wrongError.localizedDescription.contains("NSFetchRequest"))
            // Nothing can throw in memory: the fetch is logged and reads as nil.
            let car = try #require(try stack.fetch("Car").first)
            #expect(bad.evaluate(with: car) == false)
            #expect(wrong.expressionValue(with: nil, context: nil) == nil)
        }
    }

    @Test("Apple's accessors, expression type, and FETCH(…) in a format")
    func surface() throws {
        let stack = try TestStack()
        try withExtendedLifetime(stack) {
            try populate(stack)
            let request = people("age > 40")
            let expression = fetchExpression(request, in: stack.context, countOnly: true)
            let fetch = try #require(expression as? NSFetchRequestExpression)
            #expect(fetch.expressionType == NSFetchRequestExpressionType)
            #expect(NSFetchRequestExpressionType.rawValue == 50)
            #expect(fetch.isCountOnlyRequest)
            #expect(fetch.requestExpression.constantValue as? NSFetchRequest<NSFetchRequestResult> === request)
            #expect(fetch.contextExpression.constantValue as? NSManagedObjectContext === stack.context)
            #expect(expression.description.hasPrefix("FETCH("))
            #expect(expression.description.hasSuffix(", YES)"))
            // A comparison gives its operand back as an NSFetchRequestExpression.
            let predicate = try #require(NSPredicate(format: "owner IN %@", fetchExpression(request, in: stack.context)) as? CoreData.NSComparisonPredicate)
            #expect((predicate.rightExpression as? NSFetchRequestExpression)?.isCountOnlyRequest == false)
            // FETCH(request, context, countOnly) parses, as Apple's format syntax writes it.
            let parsed = NSPredicate(format: "owner IN FETCH(%@, %@, NO)", request, stack.context)
            #expect(try carNames(stack, parsed) == ["Beetle"])
            #expect(try carNames(stack, NSPredicate(format: "FETCH(%@, %@, YES) == 2 AND name == 'Trabant'", request, stack.context)) == ["Trabant"])
            #expect(throws: NSError.self) { try NSPredicate(validatingFormat: "owner IN FETCH(%@, %@)", argumentArray: [request, stack.context]) }
            // A parsed FETCH(…) is evaluated as the class's: what fetch(_:) returns.
            let parsedExpression = CoreData.NSExpression(format: "FETCH(%@, %@, NO)", argumentArray: [request, stack.context])
            #expect(parsedExpression.expressionType == NSFetchRequestExpressionType)
            #expect((parsedExpression.expressionValue(with: nil, context: nil) as? [NSManagedObject])?.count == 2)
        }
    }
}
