import Foundation

// Foundation on Linux declares `NSPredicate` but marks its format initializers unavailable. These
// declarations, with the same signatures, win overload resolution in code that imports CoreData,
// so `NSPredicate(format: "name == %@", name)` compiles and works as on Apple platforms.
//
// A format predicate is a Foundation block predicate whose closure holds the parsed tree: asked to
// evaluate an internal `PredicateProbe`, it hands the tree over instead (see `predicateTree()`);
// asked to evaluate anything else, it evaluates the tree in memory.

extension NSPredicate {
    /// Creates a predicate from a format string in Apple's predicate syntax, with `%@`, `%K`, `%d`,
    /// … taken from `args` in order.
    ///
    /// ```swift
    /// let adults = NSPredicate(format: "age >= %d AND name BEGINSWITH[c] %@", 18, "a")
    /// let owned = NSPredicate(format: "owner == %@", person)
    /// let some = NSPredicate(format: "name IN %@", ["Ada", "Grace"])
    /// ```
    ///
    /// As on Apple platforms a malformed format is a programmer error, but here it does not trap:
    /// the predicate evaluates to `false`, and a fetch that uses it throws the parse error
    /// (`NSCocoaErrorDomain` 2048, naming the position). Use ``init(validatingFormat:_:)`` to get
    /// the error at once.
    public convenience init(format predicateFormat: String, _ args: CVarArg...) {
        self.init(coreDataFormat: predicateFormat, arguments: args.map { $0 as Any })
    }

    /// Creates a predicate from a format string, with `%@`, `%K`, `%d`, … taken from `arguments`
    /// (`NSNull` for `nil`).
    ///
    /// ```swift
    /// let predicate = NSPredicate(format: "%K > %@", argumentArray: ["price", 9.99])
    /// ```
    public convenience init(format predicateFormat: String, argumentArray arguments: [Any]?) {
        self.init(coreDataFormat: predicateFormat, arguments: arguments ?? [])
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
    public convenience init(validatingFormat predicateFormat: String, _ args: CVarArg...) throws {
        let tree = try PredicateParser.parse(predicateFormat, arguments: args.map { $0 as Any })
        self.init(predicateTree: tree)
    }

    /// Creates a predicate from a format string and an argument array, throwing if it is malformed.
    ///
    /// Linux addition, as ``init(validatingFormat:_:)``.
    ///
    /// ```swift
    /// let predicate = try NSPredicate(validatingFormat: "name == %@", argumentArray: ["Ada"])
    /// ```
    public convenience init(validatingFormat predicateFormat: String, argumentArray arguments: [Any]?) throws {
        let tree = try PredicateParser.parse(predicateFormat, arguments: arguments ?? [])
        self.init(predicateTree: tree)
    }

    /// Returns a copy of the predicate with each `$NAME` replaced by `variables["NAME"]`.
    /// Variables not in the dictionary are left in place (a fetch that meets one throws).
    ///
    /// ```swift
    /// let template = NSPredicate(format: "name == $NAME")
    /// let predicate = template.withSubstitutionVariables(["NAME": "Ada"])
    /// ```
    public func withSubstitutionVariables(_ variables: [String: Any]) -> NSPredicate {
        do {
            return NSPredicate(predicateTree: try predicateTree().substituting(variables))
        } catch {
            return NSPredicate(parseResult: .failure(error))
        }
    }

    // MARK: Internal

    internal convenience init(coreDataFormat format: String, arguments: [Any]) {
        do {
            self.init(parseResult: .success(try PredicateParser.parse(format, arguments: arguments)))
        } catch {
            self.init(parseResult: .failure(error))
        }
    }

    /// A predicate for an already-parsed tree.
    internal convenience init(predicateTree tree: PredicateNode) {
        self.init(parseResult: .success(tree))
    }

    internal convenience init(parseResult: Result<PredicateNode, any Error>) {
        self.init(block: { object, bindings in
            if let probe = object as? PredicateProbe {
                probe.result = parseResult
                return false
            }
            guard case .success(let tree) = parseResult else { return false }
            return PredicateEvaluator.evaluate(tree, object: object, variables: bindings)
        })
    }

    /// The predicate's parsed tree, for the SQL compiler and the in-memory evaluator.
    ///
    /// Understands format predicates made here, Foundation's `NSCompoundPredicate` and
    /// `NSPredicate(value:)`. Throws the parse error of a malformed format, and an
    /// `unimplemented SQL generation for predicate` error for a block predicate. (A block predicate
    /// is called once with an internal probe object to find out; like Apple's SQLite store, fetches
    /// do not support block predicates.)
    internal func predicateTree() throws -> PredicateNode {
        if let compound = self as? NSCompoundPredicate {
            let parts = try compound.subpredicates.map { try $0.predicateTree() }
            switch compound.compoundPredicateType {
            case .and: return .and(parts)
            case .or: return .or(parts)
            case .not:
                guard let first = parts.first else { return .constant(true) }
                return .not(first)
            }
        }
        if isEqual(NSPredicate(value: true)) { return .constant(true) }
        if isEqual(NSPredicate(value: false)) { return .constant(false) }
        let probe = PredicateProbe()
        _ = evaluate(with: probe, substitutionVariables: nil)
        guard let result = probe.result else {
            throw PredicateErrors.unsupportedPredicate("block predicates cannot be evaluated by a persistent store; use a format predicate")
        }
        return try result.get()
    }
}

/// Handed to a predicate's block to get its parsed tree back. Never seen by user code.
internal final class PredicateProbe {
    var result: Result<PredicateNode, any Error>?
}
