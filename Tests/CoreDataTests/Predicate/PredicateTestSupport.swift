import CSQLite
import CoreDataExamples
import Foundation
import Testing
@testable import CoreData

/// A small model shaped like a real one — `Person` —< `Car` (one-to-many), `Person` >—< `Club`
/// (many-to-many) — an in-memory SQLite database with Core Data's tables for it, and the same rows
/// as objects the in-memory evaluator reads.
final class PredicateTestWorld {
    let model: NSManagedObjectModel
    let person: NSEntityDescription
    let car: NSEntityDescription
    let club: NSEntityDescription
    let database: PredicateTestDatabase
    private(set) var people: [PredicateTestObject] = []
    private(set) var cars: [PredicateTestObject] = []
    private(set) var clubs: [PredicateTestObject] = []

    /// Values the generated rows draw from; `nil` stands for a missing value.
    static let names: [String?] = ["Ada", "ada", "ADA", "Zoë", "zoe", "Zoe", "ZOË", "émile", "Emile", "a*b", "a?b", "",
                                   "%", "_x", "O'Brien", "naïve", "naive", "abc", "abd", "ab", "b", "ß", "SS", "日本語",
                                   "😀x", "x\u{301}", "a\\b", nil, nil]
    static let years: [Int64?] = [0, 1, -1, 5, 42, 1999, 2000, 2024, Int64.max, Int64.min, 9007199254740993, nil, nil]
    static let scores: [Double?] = [0, 0.5, -1.25, 2, 42, 1e20, 9007199254740992, -0.0, 3.14159, nil]
    static let flags: [Bool?] = [true, false, nil]
    static let dates: [Date?] = [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 86_400.5),
                                 Date(timeIntervalSinceReferenceDate: -1e9), Date(timeIntervalSinceReferenceDate: 7e8), nil]
    static let uuids: [UUID?] = [UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
                                 UUID(uuidString: "F0000000-0000-0000-0000-000000000000")!,
                                 UUID(uuidString: "12345678-9ABC-DEF0-1234-56789ABCDEF0")!, nil]
    static let blobs: [Data?] = [Data(), Data([0]), Data([1, 2, 3]), Data("abc".utf8), nil]
    static let links: [URL?] = [URL(string: "https://example.com/a")!, URL(string: "https://example.com/b?q=1")!,
                                URL(string: "file:///tmp/x")!, nil]
    static let prices: [Decimal?] = [Decimal(string: "1.5")!, Decimal(string: "0.1")!, Decimal(string: "-3")!,
                                     Decimal(string: "100")!, Decimal(string: "2.25")!, nil]

    init(seed: UInt64 = 7, people peopleCount: Int = 12, cars carCount: Int = 60, clubs clubCount: Int = 5) throws {
        let person = NSEntityDescription()
        person.name = "Person"
        let car = NSEntityDescription()
        car.name = "Car"
        let club = NSEntityDescription()
        club.name = "Club"

        let owner = relationship("owner", person, toMany: false)
        let ownedCars = relationship("cars", car, toMany: true)
        owner.inverseRelationship = ownedCars
        ownedCars.inverseRelationship = owner
        let memberships = relationship("clubs", club, toMany: true)
        let members = relationship("members", person, toMany: true)
        memberships.inverseRelationship = members
        members.inverseRelationship = memberships

        person.properties = [attribute("name", .stringAttributeType), attribute("age", .integer64AttributeType), ownedCars, memberships]
        car.properties = [attribute("name", .stringAttributeType), attribute("year", .integer64AttributeType),
                          attribute("score", .doubleAttributeType), attribute("flag", .booleanAttributeType),
                          attribute("born", .dateAttributeType), attribute("uid", .UUIDAttributeType),
                          attribute("blob", .binaryDataAttributeType), attribute("link", .URIAttributeType),
                          attribute("price", .decimalAttributeType), attribute("extra", .transformableAttributeType), owner]
        club.properties = [attribute("title", .stringAttributeType), members]

        let model = NSManagedObjectModel()
        model.entities = [car, club, person]
        model.freeze()
        self.model = model
        self.person = person
        self.car = car
        self.club = club
        self.database = try PredicateTestDatabase()
        try createTables()
        try populate(seed: seed, peopleCount: peopleCount, carCount: carCount, clubCount: clubCount)
    }

    // MARK: Schema

    private static func sqlType(_ property: NSPropertyDescription) -> String {
        guard let attribute = property as? NSAttributeDescription else { return "INTEGER" }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType, .booleanAttributeType: return "INTEGER"
        case .doubleAttributeType, .floatAttributeType: return "FLOAT"
        case .decimalAttributeType: return "DECIMAL"
        case .stringAttributeType, .URIAttributeType: return "VARCHAR"
        case .dateAttributeType: return "TIMESTAMP"
        default: return "BLOB"
        }
    }

    private func createTables() throws {
        var joinTables: Set<String> = []
        for entity in [person, car, club] {
            let layout = entity.layout
            let columns = layout.rowIndexes.map { layout.properties[$0] }.map { "\($0.columnName) \(Self.sqlType($0))" }
            try database.execute("CREATE TABLE \(layout.tableName) (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, \(columns.joined(separator: ", ")))")
            for index in layout.relationshipIndexes {
                guard let table = (layout.properties[index] as? NSRelationshipDescription)?.joinTable,
                      joinTables.insert(table.name).inserted else { continue }
                try database.execute("CREATE TABLE \(table.name) (\(table.sourceColumn) INTEGER, \(table.destinationColumn) INTEGER)")
            }
        }
    }

    // MARK: Rows

    private func populate(seed: UInt64, peopleCount: Int, carCount: Int, clubCount: Int) throws {
        var random = PredicateTestRandom(seed: seed)
        for pk in 1...peopleCount {
            let object = PredicateTestObject(pk: Int64(pk))
            object.values["name"] = random.pick(Self.names) as Any?
            object.values["age"] = (random.pick(Self.years)).map { NSNumber(value: $0) }
            people.append(object)
        }
        for pk in 1...clubCount {
            let object = PredicateTestObject(pk: Int64(pk))
            object.values["title"] = random.pick(Self.names) as Any?
            clubs.append(object)
        }
        for pk in 1...carCount {
            let object = PredicateTestObject(pk: Int64(pk))
            object.values["name"] = random.pick(Self.names) as Any?
            object.values["year"] = random.pick(Self.years).map { NSNumber(value: $0) }
            object.values["score"] = random.pick(Self.scores).map { NSNumber(value: $0) }
            object.values["flag"] = random.pick(Self.flags).map { NSNumber(value: $0) }
            object.values["born"] = random.pick(Self.dates) as Any?
            object.values["uid"] = random.pick(Self.uuids) as Any?
            object.values["blob"] = random.pick(Self.blobs) as Any?
            object.values["link"] = random.pick(Self.links) as Any?
            object.values["price"] = random.pick(Self.prices).map { NSDecimalNumber(decimal: $0) }
            if random.next() % 5 != 0 {
                let owner = people[Int(random.next() % UInt64(people.count))]
                object.values["owner"] = owner
                owner.many["cars", default: []].append(object)
            }
            cars.append(object)
        }
        for person in people {
            person.many["cars", default: []] += []
            person.many["clubs"] = []
        }
        for club in clubs {
            club.many["members"] = []
            for person in people where random.next() % 3 == 0 {
                club.many["members"]!.append(person)
                person.many["clubs"]!.append(club)
            }
        }

        for object in people { try insert(object, into: person) }
        for object in clubs { try insert(object, into: club) }
        for object in cars { try insert(object, into: car) }
        let memberships = (person.propertiesByName["clubs"] as! NSRelationshipDescription).joinTable!
        for person in people {
            for club in person.many["clubs"] ?? [] {
                try database.run("INSERT INTO \(memberships.name) (\(memberships.sourceColumn), \(memberships.destinationColumn)) VALUES (?, ?)",
                                 [.int(person.pk), .int(club.pk)])
            }
        }
    }

    /// Writes a row the way the SQLite store does.
    private func insert(_ object: PredicateTestObject, into entity: NSEntityDescription) throws {
        let layout = entity.layout
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var values: [StoreValue] = [.int(object.pk), .int(Int64(layout.entityNumber)), .int(1)]
        for index in layout.rowIndexes {
            let property = layout.properties[index]
            columns.append(property.columnName)
            values.append(Self.stored(object.values[property.name] ?? nil))
        }
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        try database.run("INSERT INTO \(layout.tableName) (\(columns.joined(separator: ", "))) VALUES (\(marks))", values)
    }

    /// Core Data's column encoding of a key-value-coding value.
    static func stored(_ value: Any?) -> StoreValue {
        switch value {
        case nil: return .null
        case let v as NSDecimalNumber: return .string(v.decimalValue.description)
        case let v as NSNumber:
            switch UInt8(bitPattern: v.objCType.pointee) {
            case UInt8(ascii: "d"), UInt8(ascii: "f"): return .double(v.doubleValue)
            default: return .int(v.int64Value)
            }
        case let v as String: return .string(v)
        case let v as Date: return .double(v.timeIntervalSinceReferenceDate)
        case let v as UUID: return .data(withUnsafeBytes(of: v.uuid) { Data($0) })
        case let v as Data: return .data(v)
        case let v as URL: return .string(v.absoluteString)
        case let v as PredicateTestObject: return .int(v.pk)
        default: return .null
        }
    }

    // MARK: Comparing SQL with memory

    /// The primary keys of `entity`'s rows the compiled predicate selects.
    func sqlMatches(_ predicate: NSPredicate, entity: NSEntityDescription) throws -> (Set<Int64>, SQLFragment) {
        var compiler = PredicateSQLCompiler(entity: entity)
        let condition = try compiler.compile(try predicate.predicateTree())
        let sql = "SELECT t0.Z_PK FROM \(entity.layout.tableName) t0 \(compiler.joins.joined(separator: " ")) WHERE \(condition.sql)"
        return (Set(try database.query(sql, condition.bindings).map { $0[0].int! }), condition)
    }

    /// The primary keys of the objects the in-memory evaluator accepts.
    func memoryMatches(_ predicate: NSPredicate, entity: NSEntityDescription) -> Set<Int64> {
        let objects = entity === car ? cars : (entity === person ? people : clubs)
        return Set(objects.filter { predicate.evaluate(with: $0) }.map(\.pk))
    }
}

/// A row as an object: attribute values as key-value coding returns them, to-one relationships
/// as objects, to-many relationships as arrays.
final class PredicateTestObject: PredicateKeyValueCoding, CustomStringConvertible {
    let pk: Int64
    var values: [String: Any?] = [:]
    var many: [String: [PredicateTestObject]] = [:]

    init(pk: Int64) { self.pk = pk }

    func predicateValue(forKey key: String) -> Any? {
        if let items = many[key] { return items }
        return values[key] ?? nil
    }

    var predicateObjectID: NSManagedObjectID? { nil }

    var description: String {
        "#\(pk) " + values.keys.sorted().map { "\($0)=\(values[$0].map { $0.map { "\($0)" } ?? "nil" } ?? "nil")" }.joined(separator: " ")
    }
}

/// A deterministic generator (SplitMix64, shared with the benchmark), so failures reproduce.
typealias PredicateTestRandom = SplitMix64

extension SplitMix64 {
    mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }
}

/// An in-memory SQLite database with the predicate functions registered.
final class PredicateTestDatabase {
    let handle: OpaquePointer

    enum Value: Equatable {
        case null, int(Int64), double(Double), text(String), blob(Data)
        var int: Int64? { if case .int(let v) = self { return v } else { return nil } }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        var db: OpaquePointer?
        guard sqlite3_open(":memory:", &db) == SQLITE_OK, let db else { throw Failure(description: "cannot open SQLite") }
        handle = db
        PredicateSQLCompiler.registerFunctions(on: db)
    }

    deinit { sqlite3_close(handle) }

    func execute(_ sql: String) throws {
        _ = try query(sql, [])
    }

    func run(_ sql: String, _ bindings: [StoreValue]) throws {
        _ = try query(sql, bindings)
    }

    func query(_ sql: String, _ bindings: [StoreValue]) throws -> [[Value]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: "\(String(cString: sqlite3_errmsg(handle))) in \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        guard Int(sqlite3_bind_parameter_count(statement)) == bindings.count else {
            throw Failure(description: "\(sqlite3_bind_parameter_count(statement)) placeholders, \(bindings.count) bindings in \(sql)")
        }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (offset, value) in bindings.enumerated() {
            let index = Int32(offset + 1)
            switch value {
            case .null: sqlite3_bind_null(statement, index)
            case .int(let v): sqlite3_bind_int64(statement, index, v)
            case .bool(let v): sqlite3_bind_int64(statement, index, v ? 1 : 0)
            case .double(let v): sqlite3_bind_double(statement, index, v)
            case .string(let v): sqlite3_bind_text(statement, index, v, Int32(v.utf8.count), transient)
            case .data(let v):
                _ = v.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(v.count), transient) }
            default: throw Failure(description: "the compiler bound \(value); only null, int, double, string and data are expected")
            }
        }
        var rows: [[Value]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw Failure(description: "\(String(cString: sqlite3_errmsg(handle))) in \(sql)") }
            var row: [Value] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.int(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.double(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    row.append(.blob(count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, column), count: count)))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return rows
    }
}
