// TEMPORARY: replaced by the predicate layer (Sources/CoreData/Predicate).
import Foundation
internal indirect enum PredicateNode: @unchecked Sendable { case always(Bool) }
internal struct SortKey: @unchecked Sendable { var keyPath: String; var ascending: Bool }
internal struct SQLFragment { var sql: String; var bindings: [StoreValue] }
internal struct PredicateSQLCompiler {
    var joins: [String] = []
    init(entity: NSEntityDescription) {}
    mutating func compile(_ node: PredicateNode) throws -> SQLFragment { SQLFragment(sql: "1", bindings: []) }
    mutating func orderBy(_ key: SortKey) throws -> SQLFragment { SQLFragment(sql: "t0.Z_PK", bindings: []) }
}
internal enum InMemoryEvaluation {
    static func matches(_ node: PredicateNode, record: [String: Any]) throws -> Bool { true }
    static func orderedBefore(_ a: [String: Any], _ b: [String: Any], keys: [SortKey], tieBreak: Bool) -> Bool { tieBreak }
}
internal enum PredicateBridge {
    static func tree(of predicate: NSPredicate) throws -> PredicateNode { .always(true) }
    static func sortKeys(of descriptors: [NSSortDescriptor]) throws -> [SortKey] { [] }
    static func evaluate(_ node: PredicateNode, on object: NSManagedObject) throws -> Bool { true }
    static func sort(_ objects: [NSManagedObject], by keys: [SortKey]) throws -> [NSManagedObject] { objects }
}
extension NSPredicate {
    public convenience init(format: String, _ args: any CVarArg...) { self.init(value: true) }
}
