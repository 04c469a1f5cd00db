import CoreData
import Foundation

// swift-coredata doing issue 4's predicate workloads through Apple's API. The `Product` entity
// is built in code; `code` is indexed the Core Data way (an `NSFetchIndexDescription`, from
// which the SQLite store creates `Z_Product_byCode ON ZPRODUCT (ZCODE)`). The store file is
// filled once per run (untimed); every repetition opens a new coordinator and a new
// private-queue context on it and fetches one object (untimed, which opens the store's reader
// connection), so nothing else is cached in memory, and times its queries inside one
// `performAndWait`.

extension CoreDataBench {
    static func predicateRepetition(_ workload: BenchWorkload, size: Int, folder: BenchFolder) throws -> BenchRepetition {
        let data = PredicateBench.data(rows: size, folder: folder)
        let model = productModel()
        let file = try folder.prepared("coredata-products-\(size)") { () throws -> URL in
            let file = try folder.freshStore("coredata-products")
            let stack = try Stack(model: model, url: file)
            let context = stack.context
            try context.performAndWait {
                for row in 0..<data.rows {
                    let product = BenchProduct(context: context)
                    product.code = data.codes[row]
                    product.name = data.names[row]
                    product.category = data.categories[row]
                    product.amount = data.amounts[row]
                }
                try context.save()
            }
            return file
        }
        return {
            let stack = try Stack(model: model, url: file)
            let context = stack.context
            // The store opens its reader connection on first use: that first use (one object),
            // untimed, as raw SQLite and GRDB open their connections untimed.
            _ = try context.performAndWait {
                let first = NSFetchRequest<BenchProduct>(entityName: "Product")
                first.fetchLimit = 1
                return try context.fetch(first).count
            }
            switch workload {
            case .equalityFetch:
                return try measureFetches(context, data.equalityCodes, limit: 0) { NSPredicate(format: "code == %@", $0) }
            case .prefixSearch:
                return try measureFetches(context, data.prefixes, limit: PredicateBench.prefixLimit) {
                    NSPredicate(format: "name BEGINSWITH[cd] %@", $0)
                }
            case .lookupByID:
                // The IDs, collected beforehand (untimed) in another context: the timed context
                // has nothing registered, and every key is looked up once, so each lookup reads
                // its row (the coordinator's row cache holds only rows this coordinator saved).
                let ids = try collectIDs(data.lookupKeys, coordinator: stack.coordinator)
                return try context.performAndWait {
                    try BenchMeter.measure {
                        var sum = 0
                        for id in ids {
                            let product = try context.existingObject(with: id) as! BenchProduct
                            sum &+= Int(product.amount)
                        }
                        return sum
                    }
                }
            case .groupedAggregates:
                return try context.performAndWait {
                    try BenchMeter.measure {
                        var sum = 0
                        for _ in 0..<workload.queries(size: size) {
                            let total = NSExpressionDescription()
                            total.name = "total"
                            total.expression = NSExpression(forFunction: "sum:", arguments: [NSExpression(forKeyPath: "amount")])
                            total.expressionResultType = .integer64AttributeType
                            let mean = NSExpressionDescription()
                            mean.name = "mean"
                            mean.expression = NSExpression(forFunction: "average:", arguments: [NSExpression(forKeyPath: "amount")])
                            mean.expressionResultType = .doubleAttributeType
                            let request = NSFetchRequest<NSDictionary>(entityName: "Product")
                            request.resultType = .dictionaryResultType
                            request.propertiesToFetch = ["category", total, mean]
                            request.propertiesToGroupBy = ["category"]
                            for group in try context.fetch(request) {
                                sum &+= PredicateBench.groupChecksum(
                                    category: group["category"] as? String ?? "",
                                    sum: Int64(number(group["total"])), average: number(group["mean"]))
                            }
                        }
                        return sum
                    }
                }
            default:
                throw BenchFailure("\(workload.title) is not a predicate workload")
            }
        }
    }

    /// A number of a result dictionary as a `Double` (0 when missing), whichever type holds it.
    @inline(__always)
    private static func number(_ value: Any?) -> Double {
        switch value {
        case let number as NSNumber: number.doubleValue
        case let value as Int64: Double(value)
        case let value as Int: Double(value)
        case let value as Double: value
        case let value as Decimal: NSDecimalNumber(decimal: value).doubleValue
        default: 0
        }
    }

    /// Times one fetch request per argument, as an app writes it: a new `NSFetchRequest` with
    /// the predicate `predicate` makes, `limit` as its `fetchLimit`; reads `amount` of every
    /// object, and drops the objects before the next fetch.
    private static func measureFetches(_ context: NSManagedObjectContext, _ arguments: [String], limit: Int,
                                       predicate: (String) -> NSPredicate) throws -> BenchSample {
        try context.performAndWait {
            try BenchMeter.measure {
                var sum = 0
                for argument in arguments {
                    let request = NSFetchRequest<BenchProduct>(entityName: "Product")
                    request.predicate = predicate(argument)
                    request.fetchLimit = limit
                    for product in try context.fetch(request) { sum &+= Int(product.amount) }
                }
                return sum
            }
        }
    }

    /// The object IDs of the products with primary keys `keys`, in that order, from an ID fetch
    /// in a context of its own.
    private static func collectIDs(_ keys: [Int64], coordinator: NSPersistentStoreCoordinator) throws -> [NSManagedObjectID] {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let all = try context.performAndWait {
            let request = NSFetchRequest<NSManagedObjectID>(entityName: "Product")
            request.resultType = .managedObjectIDResultType
            return try context.fetch(request) // in primary-key order: key k is at k - 1
        }
        return try keys.map { key in
            guard key >= 1, Int(key) <= all.count else { throw BenchFailure("coredata: no product \(key)") }
            return all[Int(key) - 1]
        }
    }

    /// The `Product` entity, built in code, with its index on `code`.
    static func productModel() -> NSManagedObjectModel {
        let entity = NSEntityDescription()
        entity.name = "Product"
        entity.managedObjectClassName = String(reflecting: BenchProduct.self)
        let attributes: [(String, NSAttributeType)] = [
            ("code", .stringAttributeType), ("name", .stringAttributeType),
            ("category", .stringAttributeType), ("amount", .integer64AttributeType),
        ]
        entity.properties = attributes.map { name, type in
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let code = entity.properties[0]
        entity.indexes = [NSFetchIndexDescription(name: "byCode", elements: [NSFetchIndexElementDescription(property: code, collationType: .binary)])]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }
}

/// The `Product` entity's class, as Xcode's code generation would write it (with `@Managed`).
final class BenchProduct: NSManagedObject {
    @Managed var code: String?
    @Managed var name: String?
    @Managed var category: String?
    @Managed var amount: Int64
}
