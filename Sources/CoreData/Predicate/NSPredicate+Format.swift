import Foundation

// Foundation on Linux declares `NSPredicate` but marks its format initializers unavailable. The
// initializers below, with the same signatures, are found instead in code that imports CoreData,
// so `NSPredicate(format: "name == %@", name)` compiles and works as on Apple platforms.
//
// As Apple's, they return a predicate of the parsed shape: an `NSComparisonPredicate` (CoreData's,
// see its file), an `NSCompoundPredicate` (Foundation's, whose `predicateFormat` is fixed by an
// internal subclass) or `NSPredicate(value:)`. A Swift
// convenience initializer cannot return a subclass, so they are declared in an extension of a
// protocol NSPredicate conforms to, where an initializer may assign `self`.

/// Implementation detail: lets `NSPredicate(format:…)` return the subclass the format parses
/// to, as on Apple platforms. Not for use in code.
public protocol _CoreDataPredicateFormatInitializable {}

extension NSPredicate: _CoreDataPredicateFormatInitializable {}

extension _CoreDataPredicateFormatInitializable where Self == NSPredicate {
    /// Creates a predicate from a format string in Apple's predicate syntax, with `%@`, `%K`, `%d`,
    /// … taken from `args` in order.
    ///
    /// ```swift
    /// let adults = NSPredicate(format: "age >= %d AND name BEGINSWITH[c] %@", 18, "a")
    /// let owned = NSPredicate(format: "owner == %@", person)
    /// let some = NSPredicate(format: "name IN %@", ["Ada", "Grace"])
    /// ```
    ///
    /// As on Apple platforms the result is an `NSComparisonPredicate`, an `NSCompoundPredicate`
    /// or `NSPredicate(value:)`. A malformed format is a programmer error on Apple platforms, but
    /// here it does not trap: the predicate evaluates to `false`, and a fetch that uses it throws
    /// the parse error (`NSCocoaErrorDomain` 2048, naming the position). Use
    /// ``init(validatingFormat:_:)`` to get the error at once.
    public init(format predicateFormat: String, _ args: CVarArg...) {
        self = NSPredicate.make(format: predicateFormat, arguments: args.map { $0 as Any })
    }

    /// Creates a predicate from a format string, with `%@`, `%K`, `%d`, … taken from `arguments`
    /// (`NSNull` for `nil`).
    ///
    /// ```swift
    /// let predicate = NSPredicate(format: "%K > %@", argumentArray: ["price", 9.99])
    /// ```
    public init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        self = NSPredicate.make(format: predicateFormat, arguments: arguments ?? [])
    }

    /// Creates a predicate from a format string whose arguments come in a C `va_list`, the way a
    /// variadic function of the app's passes its own arguments on.
    ///
    /// ```swift
    /// func predicate(_ format: String, _ args: CVarArg...) -> NSPredicate {
    ///     withVaList(args) { NSPredicate(format: format, arguments: $0) }
    /// }
    /// let owned = predicate("name == %@ AND year > %d", "Model T", 1900)
    /// ```
    ///
    /// The format's specifiers say what each argument is, as in C: `%@` and `%K` take an object
    /// (a Foundation object, a managed object, a `String`, or a Foundation value such as an array,
    /// `Date` or `UUID`, which `withVaList` passes as its bridged object here), `%d`, `%ld`, `%u`,
    /// … an integer, `%f`, `%g`, … a floating-point number, `%s` a C string. An argument of
    /// another kind than its specifier says (an integer for `%@`) is a programmer error with
    /// undefined results, as on Apple platforms. A malformed format behaves as in
    /// ``init(format:_:)``.
    public init(format predicateFormat: String, arguments argList: CVaListPointer) {
        self = NSPredicate.make(format: predicateFormat, arguments: PredicateVaList.arguments(for: predicateFormat, from: argList))
    }

    /// Creates a predicate from a format string, throwing if it is malformed.
    ///
    /// Linux addition: Apple's framework raises an Objective-C exception instead. The error is an
    /// `NSError` in `NSCocoaErrorDomain` with code 2048 (`NSFormattingError`) whose description
    /// names the position and what was expected; `userInfo["NSPredicateFormatErrorPosition"]`
    /// holds the 0-based offset.
    ///
    /// ```swift
    /// do {
    ///     let predicate = try NSPredicate(validatingFormat: userQuery)
    /// } catch {
    ///     print(error.localizedDescription) // …expected an expression at position 7…
    /// }
    /// ```
    public init(validatingFormat predicateFormat: String, _ args: CVarArg...) throws {
        self = NSPredicate.make(from: try PredicateParser.parse(predicateFormat, arguments: args.map { $0 as Any }))
    }

    /// Creates a predicate from a format string and an argument array, throwing if it is malformed.
    ///
    /// Linux addition, as ``init(validatingFormat:_:)``.
    ///
    /// ```swift
    /// let predicate = try NSPredicate(validatingFormat: "name == %@", argumentArray: ["Ada"])
    /// ```
    public init(validatingFormat predicateFormat: String, argumentArray arguments: [Any]?) throws {
        self = NSPredicate.make(from: try PredicateParser.parse(predicateFormat, arguments: arguments ?? []))
    }
}

extension NSPredicate {
    /// Returns a copy of the predicate with each `$NAME` replaced by `variables["NAME"]`.
    /// Variables not in the dictionary are left in place (a fetch that meets one throws).
    ///
    /// ```swift
    /// let template = NSPredicate(format: "name == $NAME")
    /// let predicate = template.withSubstitutionVariables(["NAME": "Ada"])
    /// ```
    public func withSubstitutionVariables(_ variables: [String: Any]) -> NSPredicate {
        do {
            return NSPredicate.make(from: try inMemoryTree().substituting(variables))
        } catch {
            return MalformedPredicate(error: error, format: formatText)
        }
    }

    // MARK: Internal

    /// `predicateFormat` without Foundation's deprecation warning: the parsed tree in format
    /// syntax, a malformed predicate's format, or `BLOCKPREDICATE`.
    internal var formatText: String {
        if let malformed = self as? MalformedPredicate { return malformed.format }
        if let deferred = self as? KeyPathFormatPredicate { return (try? deferred.parsed().tree)?.description ?? deferred.format }
        return (try? predicateTree())?.description ?? "BLOCKPREDICATE"
    }

    /// The tree, or for a predicate only Foundation evaluates (a block predicate, or a compound
    /// holding one) a comparison that evaluates it in memory, with the variables it is given as
    /// its bindings: what an expression holding it (`forConditional`, `forSubquery`) or its copy
    /// with variables substituted evaluates. A fetch still refuses it (134091: the store meets a
    /// block). A malformed format's error is thrown. In a `SUBQUERY`, the block evaluates each
    /// element (the value of the iterator `variable`).
    internal func inMemoryTree(evaluating variable: String? = nil) throws -> PredicateNode {
        do {
            return try predicateTree()
        } catch where isOnlyForFoundation {
            let predicate = self
            // The element comes as the block's argument (the iterator variable's value, read by
            // the evaluator); without one (the predicate read back and evaluated alone), the object.
            let block = ExpressionBlock(evaluatesPredicate: true) { object, arguments, context in
                var bindings: [String: Any] = [:]
                for case let (key as String, value) in context ?? [:] { bindings[key] = value }
                let element = arguments.first.flatMap { $0 is NSNull ? nil : $0 } ?? object
                return predicate.evaluate(with: element, substitutionVariables: bindings)
            }
            return .comparison(ComparisonNode(lhs: .block(block, variable.map { [.variable($0)] } ?? []), op: .equalTo, rhs: .constant(.int(1))))
        }
    }

    /// Whether the predicate has no tree only because of block predicates in it (not a malformed
    /// format, an unsupported operator, a key path that does not resolve): Foundation evaluates it.
    private var isOnlyForFoundation: Bool {
        if self is MalformedPredicate || self is KeyPathFormatPredicate || self is SwiftPredicate { return false }
        if self is NSComparisonPredicate { return false } // (a custom selector)
        if let compound = self as? NSCompoundPredicate {
            return compound.subpredicates.allSatisfy { part in (try? part.predicateTree()) != nil || part.isOnlyForFoundation }
        }
        return true // a block predicate (Foundation's `NSPredicate(block:)`)
    }

    /// The predicate for a format, or one that carries its parse error.
    internal static func make(format: String, arguments: [Any]) -> NSPredicate {
        do {
            return make(from: try PredicateParser.parse(format, arguments: arguments))
        } catch {
            // A Swift key path (`%K`) is mapped once its model is in use: built before that (a
            // `static let`), the predicate is parsed again when first used.
            if arguments.contains(where: { ($0 as? AnyKeyPath).map(KeyPathFormatPredicate.cannotBeMappedYet) ?? false }) {
                return KeyPathFormatPredicate(format: format, arguments: arguments)
            }
            return MalformedPredicate(error: error, format: format)
        }
    }

    /// The predicate of Apple's shape for a parsed tree: `NSPredicate(value:)`, an
    /// `NSCompoundPredicate` (`NONE` is `NOT ANY`) or an `NSComparisonPredicate`.
    internal static func make(from tree: PredicateNode) -> NSPredicate {
        switch tree {
        case .constant(let value): return NSPredicate(value: value)
        case .and(let parts): return FormatCompoundPredicate(type: .and, subpredicates: parts.map(make(from:)))
        case .or(let parts): return FormatCompoundPredicate(type: .or, subpredicates: parts.map(make(from:)))
        case .not(let inner): return FormatCompoundPredicate(type: .not, subpredicates: [make(from: inner)])
        case .comparison(var comparison):
            guard comparison.modifier == .none else { return NSComparisonPredicate(comparison: comparison) }
            comparison.modifier = .any
            return FormatCompoundPredicate(type: .not, subpredicates: [NSComparisonPredicate(comparison: comparison)])
        }
    }

    /// The predicate's parsed tree, for the SQL compiler and the in-memory evaluator.
    ///
    /// Understands the predicates made here, CoreData's `NSComparisonPredicate`, Foundation's
    /// `NSCompoundPredicate` and `NSPredicate(value:)`.
    /// Throws the parse error of a malformed format, and an `unimplemented SQL generation for
    /// predicate` error (134091) for a block predicate: like Apple's SQLite store, fetches do not
    /// support block predicates.
    internal func predicateTree() throws -> PredicateNode {
        if let comparison = self as? NSComparisonPredicate {
            guard !comparison.unsupportedOperator else {
                throw PredicateErrors.unsupportedPredicate("custom selectors are not available on Linux")
            }
            return .comparison(comparison.comparison)
        }
        if let compound = self as? NSCompoundPredicate {
            var parts: [PredicateNode] = []
            for predicate in compound.subpredicates { parts.append(try predicate.predicateTree()) }
            switch compound.compoundPredicateType {
            case .and: return .and(parts)
            case .or: return .or(parts)
            case .not:
                guard !parts.isEmpty else { return .constant(false) }
                return .not(parts.count == 1 ? parts[0] : .and(parts))
            }
        }
        if let malformed = self as? MalformedPredicate { throw malformed.error }
        if let deferred = self as? KeyPathFormatPredicate { return try deferred.parsed().tree }
        if let swift = self as? SwiftPredicate { return try swift.translation.result.get() }
        if isEqual(NSPredicate(value: true)) { return .constant(true) }
        if isEqual(NSPredicate(value: false)) { return .constant(false) }
        throw PredicateErrors.unsupportedPredicate("block predicates cannot be evaluated by a persistent store; use a format predicate")
    }
}

/// What `NSPredicate(format:)` returns for `AND`, `OR` and `NOT`: Foundation's class (so
/// `as? NSCompoundPredicate` and `subpredicates` work as on Apple platforms), with the
/// `predicateFormat` Foundation on Linux does not compute.
internal final class FormatCompoundPredicate: NSCompoundPredicate {
    override init(type: NSCompoundPredicate.LogicalType, subpredicates: [NSPredicate]) {
        super.init(type: type, subpredicates: subpredicates)
    }

    required init?(coder: NSCoder) { nil }

    override var predicateFormat: String { formatText }
    override var description: String { formatText }
}

/// What `NSPredicate(format:)` returns for a malformed format: never matches; a fetch that uses
/// it throws the parse error.
internal final class MalformedPredicate: NSPredicate {
    let error: any Error
    let format: String

    init(error: any Error, format: String) {
        self.error = error
        self.format = format
        super.init(value: false)
    }

    required init?(coder: NSCoder) { nil }

    override var predicateFormat: String { format }
    override var description: String { format }
    override func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool { false }
    /// Itself (Foundation's copy on Linux made a `FALSEPREDICATE`, losing the error).
    override func copy(with zone: NSZone? = nil) -> Any { self }
    override func isEqual(_ object: Any?) -> Bool { (object as? MalformedPredicate).map { $0 === self || $0.format == format } ?? false }
    override var hash: Int { format.hashValue }
}

/// What `NSPredicate(format:)` returns for a format with a Swift key path (`%K`, `\Item.name`)
/// that could not be mapped (no coordinator used its model yet, or it is no Core Data property):
/// parsed again when used,
/// then as the predicate the format makes. One that still fails throws the key path's error
/// (134091) from a fetch, and matches nothing.
internal final class KeyPathFormatPredicate: NSPredicate {
    let format: String
    private let arguments: [Any]
    private let parsedOnce = Locked<(tree: PredicateNode, predicate: NSPredicate)?>(nil)

    init(format: String, arguments: [Any]) {
        self.format = format
        self.arguments = arguments
        super.init(value: false)
    }

    required init?(coder: NSCoder) { nil }

    /// The parsed tree and the predicate it makes; the key path's error if one can't be mapped.
    func parsed() throws -> (tree: PredicateNode, predicate: NSPredicate) {
        if let done = parsedOnce.withLock({ $0 }) { return done }
        for case let keyPath as AnyKeyPath in arguments { _ = try TypedKeyPaths.names(of: keyPath) }
        let tree = try PredicateParser.parse(format, arguments: arguments)
        let done = (tree, NSPredicate.make(from: tree))
        parsedOnce.withLock { $0 = done }
        return done
    }

    override var predicateFormat: String { formatText }
    override var description: String { formatText }
    override func evaluate(with object: Any?, substitutionVariables bindings: [String: Any]?) -> Bool {
        guard let predicate = try? parsed().predicate else { return false }
        return predicate.evaluate(with: object, substitutionVariables: bindings)
    }
    override func copy(with zone: NSZone? = nil) -> Any { self }
    /// The same predicate, or another of these parsed to the same tree.
    override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? KeyPathFormatPredicate else { return false }
        if other === self { return true }
        guard let mine = try? parsed().tree, let theirs = try? other.parsed().tree else { return false }
        return mine.description == theirs.description
    }
    /// One value for all of these: equality can change once the model is in use.
    override var hash: Int { 0x4B50 }

    /// Whether `keyPath` can't be mapped now: its model is not in use yet (it may be later), or
    /// it is no Core Data property (a fetch then throws 134091 naming it, as for `#Predicate`).
    /// A format malformed otherwise is a ``MalformedPredicate``.
    static func cannotBeMappedYet(_ keyPath: AnyKeyPath) -> Bool {
        (try? TypedKeyPaths.names(of: keyPath)) == nil
    }
}
