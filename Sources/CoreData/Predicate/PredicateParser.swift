import Foundation

/// Parses Apple's predicate format syntax into a ``PredicateNode``.
///
/// Grammar, loosest binding first (keywords are case-insensitive):
///
///     predicate   := and (("OR" | "||") and)*
///     and         := not (("AND" | "&&") not)*
///     not         := ("NOT" | "!") not | "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
///     comparison  := ["ANY" | "SOME" | "ALL" | "NONE"] expression operator ["[" cdnl "]"] expression
///     operator    := == = != <> < <= =< > >= => BETWEEN IN CONTAINS BEGINSWITH ENDSWITH LIKE MATCHES
///     expression  := term (("+" | "-") term)*
///     term        := power (("*" | "/") power)*
///     power       := unary ("**" power)?
///     unary       := "-" unary | postfix
///     postfix     := primary ("." key | "[" index "]")*
///     primary     := number | string | %@ | %K | %d … | $VAR | SELF | nil | NULL | TRUE | YES | FALSE | NO
///                  | key | #key | "{" expressions "}" | "(" expression ")" | name "(" expressions ")"
///                  | FUNCTION(…) | SUBQUERY(…) | TERNARY(…) | CAST(…) | FETCH(…)
///
/// A malformed string never traps: parsing throws an error naming the position and what was
/// expected. Nesting is limited to ``maximumDepth`` levels so that hostile input cannot exhaust
/// the stack.
internal struct PredicateParser {
    struct ParseError: Error {
        var position: Int
        var message: String
    }

    /// The deepest nesting a format may have: parentheses, `NOT`s, function calls, and each
    /// operator of an arithmetic chain or subscript (`1 + 1 + 1` is two levels: it is a tree two
    /// deep, which evaluating, compiling and printing walk recursively). Deep enough for a
    /// generated chain of hundreds of terms; shallow enough for every walk of the tree to fit the
    /// 8 MB stack of a Linux thread in a debug build (3,000 levels do not).
    static let maximumDepth = 1000

    private let tokens: [PredicateToken]
    /// For each format-specifier token, the index of the argument it consumes.
    private let argumentIndexes: [Int: Int]
    private let arguments: [Any?]
    private var index = 0
    private var depth = 0
    private var predicateInParentheses: [Int: Result<(PredicateNode, Int), ParseError>] = [:]

    private init(tokens: [PredicateToken], arguments: [Any?]) {
        self.tokens = tokens
        self.arguments = arguments
        var indexes: [Int: Int] = [:]
        var next = 0
        for (offset, token) in tokens.enumerated() {
            if case .format = token.kind { indexes[offset] = next; next += 1 }
        }
        self.argumentIndexes = indexes
    }

    /// Parses `format`, taking `%@`, `%K`, `%d`, … from `arguments` in order (`nil` or `NSNull`
    /// for a `nil` object). Throws an `NSError` (``PredicateErrors/parse(format:position:message:)``).
    static func parse(_ format: String, arguments: [Any?] = []) throws -> PredicateNode {
        do {
            let tokens = try PredicateLexer.tokenize(format)
            var parser = PredicateParser(tokens: tokens, arguments: arguments)
            let node = try parser.parsePredicate()
            guard case .end = parser.current.kind else {
                throw parser.error("expected AND, OR or the end of the format")
            }
            return node
        } catch let error as PredicateLexError {
            throw PredicateErrors.parse(format: format, position: error.position, message: error.message)
        } catch let error as ParseError {
            throw PredicateErrors.parse(format: format, position: error.position, message: error.message)
        }
    }

    /// Parses a format string that is one expression (`NSExpression(format:)`), as ``parse(_:arguments:)``.
    static func parseExpression(_ format: String, arguments: [Any?] = []) throws -> ExpressionNode {
        do {
            let tokens = try PredicateLexer.tokenize(format)
            var parser = PredicateParser(tokens: tokens, arguments: arguments)
            let node = try parser.parseExpression()
            guard case .end = parser.current.kind else {
                throw parser.error("expected the end of the expression")
            }
            return node
        } catch let error as PredicateLexError {
            throw PredicateErrors.parse(format: format, position: error.position, message: error.message)
        } catch let error as ParseError {
            throw PredicateErrors.parse(format: format, position: error.position, message: error.message)
        }
    }

    // MARK: Tokens

    private var current: PredicateToken { tokens[index] }

    private func token(at offset: Int) -> PredicateToken {
        tokens[min(index + offset, tokens.count - 1)]
    }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func keyword(_ token: PredicateToken) -> String? {
        if case .identifier(let name) = token.kind { return name.uppercased() }
        return nil
    }

    private func isKeyword(_ word: String, _ offset: Int = 0) -> Bool { keyword(token(at: offset)) == word }

    private func isSymbol(_ symbol: String, _ offset: Int = 0) -> Bool { token(at: offset).kind == .symbol(symbol) }

    private mutating func expectSymbol(_ symbol: String, _ what: String? = nil) throws(ParseError) {
        guard isSymbol(symbol) else { throw error("expected \(what ?? "'\(symbol)'")") }
        advance()
    }

    private func describe(_ token: PredicateToken) -> String {
        switch token.kind {
        case .end: return "the end of the format"
        case .identifier(let name): return "'\(name)'"
        case .escapedIdentifier(let name): return "'#\(name)'"
        case .integer(let value): return "the number \(value)"
        case .double(let value): return "the number \(value)"
        case .string(let value): return "the string \"\(value)\""
        case .format: return "a format specifier"
        case .variable(let name): return "'$\(name)'"
        case .symbol(let symbol): return "'\(symbol)'"
        }
    }

    private func error(_ expected: String) -> ParseError {
        ParseError(position: current.position, message: "\(expected) at position \(current.position), found \(describe(current))")
    }

    private mutating func enter() throws(ParseError) {
        guard depth < Self.maximumDepth else {
            throw ParseError(position: current.position, message: "the format is nested more than \(Self.maximumDepth) levels deep at position \(current.position)")
        }
        depth += 1
    }

    // MARK: Predicates

    private mutating func parsePredicate() throws(ParseError) -> PredicateNode {
        try enter()
        defer { depth -= 1 }
        var parts = [try parseAnd()]
        while isKeyword("OR") || isSymbol("||") {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts.flatMap { if case .or(let inner) = $0 { inner } else { [$0] } })
    }

    private mutating func parseAnd() throws(ParseError) -> PredicateNode {
        var parts = [try parseNot()]
        while isKeyword("AND") || isSymbol("&&") {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts.flatMap { if case .and(let inner) = $0 { inner } else { [$0] } })
    }

    private mutating func parseNot() throws(ParseError) -> PredicateNode {
        if isKeyword("NOT") || isSymbol("!") {
            try enter()
            defer { depth -= 1 }
            advance()
            return .not(try parseNot())
        }
        if isKeyword("TRUEPREDICATE") { advance(); return .constant(true) }
        if isKeyword("FALSEPREDICATE") { advance(); return .constant(false) }
        if isSymbol("(") {
            // `(` opens either a predicate or an expression (`(a + 1) > 2`): try the predicate first.
            let start = index
            let attempt = parseParenthesizedPredicate()
            if case .success(let (node, end)) = attempt {
                index = end
                if !startsOperator() { return node }
            }
            index = start
            do {
                return try parseComparison()
            } catch let comparisonError {
                if case .failure(let predicateError) = attempt, predicateError.position > comparisonError.position {
                    throw predicateError
                }
                throw comparisonError
            }
        }
        return try parseComparison()
    }

    /// `( predicate )` at the current `(`, memoised per position so nested parentheses stay linear.
    private mutating func parseParenthesizedPredicate() -> Result<(PredicateNode, Int), ParseError> {
        let start = index
        if let known = predicateInParentheses[start] { return known }
        let result: Result<(PredicateNode, Int), ParseError>
        do throws(ParseError) {
            advance()
            let node = try parsePredicate()
            try expectSymbol(")", "')'")
            result = .success((node, index))
        } catch {
            result = .failure(error)
        }
        predicateInParentheses[start] = result
        index = start
        return result
    }

    /// Whether the current token continues an expression or starts a comparison operator.
    private func startsOperator() -> Bool {
        if case .symbol(let symbol) = current.kind {
            return ["==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "**", ".", "["].contains(symbol)
        }
        if let word = keyword(current) {
            return ["BETWEEN", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES"].contains(word)
        }
        return false
    }

    private mutating func parseComparison() throws(ParseError) -> PredicateNode {
        var modifier = ComparisonModifier.direct
        switch keyword(current) {
        case "ANY", "SOME": modifier = .any; advance()
        case "ALL": modifier = .all; advance()
        case "NONE": modifier = .none; advance()
        default: break
        }
        let lhs = try parseExpression()
        let op = try parseOperator()
        let options = try parseOptions()
        let rhs = try parseExpression()
        return .comparison(ComparisonNode(lhs: lhs, op: op, rhs: rhs, options: options, modifier: modifier))
    }

    private mutating func parseOperator() throws(ParseError) -> ComparisonOperator {
        let symbols: [String: ComparisonOperator] = ["==": .equalTo, "!=": .notEqualTo, "<": .lessThan, "<=": .lessThanOrEqualTo,
                                                     ">": .greaterThan, ">=": .greaterThanOrEqualTo]
        if case .symbol(let symbol) = current.kind, let op = symbols[symbol] { advance(); return op }
        if let word = keyword(current), let op = ComparisonOperator(rawValue: word), !op.rawValue.hasPrefix("=") {
            advance()
            return op
        }
        throw error("expected a comparison operator (==, !=, <, <=, >, >=, BETWEEN, IN, CONTAINS, BEGINSWITH, ENDSWITH, LIKE, MATCHES)")
    }

    /// `[c]`, `[d]`, `[cd]`, `[n]`, `[l]` right after an operator.
    private mutating func parseOptions() throws(ParseError) -> ComparisonOptions {
        guard isSymbol("[") else { return [] }
        advance()
        guard case .identifier(let letters) = current.kind else { throw error("expected comparison options (c, d, n, l)") }
        var options: ComparisonOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            case "l": options.insert(.localeSensitive)
            default: throw error("expected comparison options (c, d, n, l)")
            }
        }
        advance()
        try expectSymbol("]", "']' after the comparison options")
        return options
    }

    // MARK: Expressions

    private mutating func parseExpression() throws(ParseError) -> ExpressionNode {
        let entry = depth
        defer { depth = entry }
        try enter()
        var lhs = try parseTerm()
        while isSymbol("+") || isSymbol("-") {
            let name = isSymbol("+") ? "add:to:" : "from:subtract:"
            try enter() // each operator nests the chain so far one level deeper
            advance()
            lhs = .function(name, [lhs, try parseTerm()])
        }
        return lhs
    }

    private mutating func parseTerm() throws(ParseError) -> ExpressionNode {
        let entry = depth
        defer { depth = entry }
        var lhs = try parsePower()
        while isSymbol("*") || isSymbol("/") {
            let name = isSymbol("*") ? "multiply:by:" : "divide:by:"
            try enter()
            advance()
            lhs = .function(name, [lhs, try parsePower()])
        }
        return lhs
    }

    private mutating func parsePower() throws(ParseError) -> ExpressionNode {
        let base = try parseUnary()
        guard isSymbol("**") else { return base }
        advance()
        try enter()
        defer { depth -= 1 }
        return .function("raise:toPower:", [base, try parsePower()])
    }

    private mutating func parseUnary() throws(ParseError) -> ExpressionNode {
        guard isSymbol("-") else { return try parsePostfix() }
        try enter()
        defer { depth -= 1 }
        advance()
        let operand = try parseUnary()
        switch operand {
        case .constant(.int(let v)) where v != Int64.min: return .constant(.int(-v))
        case .constant(.double(let v)): return .constant(.double(-v))
        default: return .function("negate:", [operand])
        }
    }

    private mutating func parsePostfix() throws(ParseError) -> ExpressionNode {
        let entry = depth
        defer { depth = entry }
        var expression = try parsePrimary()
        while true {
            if isSymbol(".") {
                advance()
                let key: String
                switch current.kind {
                case .identifier(let name), .escapedIdentifier(let name): key = name
                default: throw error("expected a key after '.'")
                }
                advance()
                expression = Self.appending([key], to: expression)
            } else if isSymbol("[") {
                try enter() // each subscript nests the expression one level deeper
                advance()
                let subscriptExpression: ExpressionNode
                switch keyword(current) {
                case "FIRST", "LAST", "SIZE":
                    subscriptExpression = .constant(.string(keyword(current)!))
                    advance()
                default:
                    subscriptExpression = try parseExpression()
                }
                try expectSymbol("]", "']' after the index")
                expression = .function("objectFrom:withIndex:", [expression, subscriptExpression])
            } else {
                return expression
            }
        }
    }

    static func appending(_ keys: [String], to expression: ExpressionNode) -> ExpressionNode {
        switch expression {
        case .keyPath(let path): return .keyPath(path + keys)
        case .evaluatedObject: return .keyPath(keys)
        case .keyPathFrom(let base, let path): return .keyPathFrom(base, path + keys)
        default: return .keyPathFrom(expression, keys)
        }
    }

    private static let reserved: Set<String> = [
        "AND", "OR", "NOT", "IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN",
        "ANY", "SOME", "ALL", "NONE", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    private mutating func parsePrimary() throws(ParseError) -> ExpressionNode {
        let token = current
        switch token.kind {
        case .integer(let value): advance(); return .constant(.int(value))
        case .double(let value): advance(); return .constant(.double(value))
        case .string(let value): advance(); return .constant(.string(value))
        case .variable(let name): advance(); return .variable(name)
        case .escapedIdentifier(let name): advance(); return .keyPath([name])
        case .format(let specifier):
            let expression = try formatArgument(specifier, at: token)
            advance()
            return expression
        case .symbol("{"):
            advance()
            var items: [ExpressionNode] = []
            if !isSymbol("}") {
                items.append(try parseExpression())
                while isSymbol(",") {
                    advance()
                    items.append(try parseExpression())
                }
            }
            try expectSymbol("}", "',' or '}' in the aggregate")
            var constants: [PredicateValue] = []
            for item in items {
                guard case .constant(let value) = item else { return .aggregate(items) }
                constants.append(value)
            }
            return .constant(.collection(constants))
        case .symbol("("):
            advance()
            let inner = try parseExpression()
            try expectSymbol(")", "')'")
            return inner
        case .identifier(let name):
            let word = name.uppercased()
            let callFollows = self.token(at: 1).kind == .symbol("(")
            switch word {
            case "NIL", "NULL": advance(); return .constant(.null)
            case "TRUE", "YES": advance(); return .constant(.int(1))
            case "FALSE", "NO": advance(); return .constant(.int(0))
            case "SELF": advance(); return .evaluatedObject
            default: break
            }
            if Self.reserved.contains(word) {
                throw error("expected an expression (write #\(name) for a key named \(name))")
            }
            advance()
            guard callFollows else { return .keyPath([name]) }
            return try parseCall(name: name, word: word, at: token)
        default:
            throw error("expected an expression")
        }
    }

    /// `name(args)`, `FUNCTION(receiver, 'selector:', args)`, `SUBQUERY(collection, $x, predicate)`,
    /// `TERNARY(predicate, a, b)`, `CAST(value, 'Type')`, `FETCH(request, context, countOnly)`.
    private mutating func parseCall(name: String, word: String, at start: PredicateToken) throws(ParseError) -> ExpressionNode {
        try enter()
        defer { depth -= 1 }
        advance() // "("
        switch word {
        case "SUBQUERY":
            let collection = try parseExpression()
            try expectSymbol(",", "',' after the SUBQUERY collection")
            guard case .variable(let variable) = current.kind else { throw error("expected a $variable in SUBQUERY") }
            advance()
            try expectSymbol(",", "',' after the SUBQUERY variable")
            let predicate = try parsePredicate()
            try expectSymbol(")", "')' closing SUBQUERY")
            return .subquery(collection, variable, predicate)
        case "TERNARY":
            let predicate = try parsePredicate()
            try expectSymbol(",", "',' in TERNARY")
            let a = try parseExpression()
            try expectSymbol(",", "',' in TERNARY")
            let b = try parseExpression()
            try expectSymbol(")", "')' closing TERNARY")
            return .conditional(predicate, a, b)
        default:
            var args: [ExpressionNode] = []
            if !isSymbol(")") {
                args.append(try parseExpression())
                while isSymbol(",") {
                    advance()
                    args.append(try parseExpression())
                }
            }
            try expectSymbol(")", "',' or ')' in the argument list")
            switch word {
            case "FUNCTION":
                guard args.count >= 2, case .constant(.string(let selector)) = args[1] else {
                    throw ParseError(position: start.position, message: "FUNCTION needs a receiver and a selector name at position \(start.position)")
                }
                let arguments = [args[0]] + args.dropFirst(2)
                // A method of a variable's value, as `FUNCTION($entityPolicy, "toInt16WithValue:", $source.x)`
                // in a mapping model: called by name when evaluated (see `ExpressionMethodReceiver`).
                let variableReceiver: Bool
                switch args[0] {
                case .variable, .keyPathFrom(.variable, _): variableReceiver = true
                default: variableReceiver = false
                }
                guard PredicateFunctions.isKnown(selector, argumentCount: arguments.count)
                        || (variableReceiver && PredicateFunctions.invokesMethod(selector)) else {
                    throw ParseError(position: start.position, message: "unsupported function '\(selector)' with \(arguments.count) argument(s) at position \(start.position) (Linux has no Objective-C selectors; the functions are NSExpression(forFunction:)'s)")
                }
                return .function(selector, arguments)
            case "FETCH":
                // `FETCH(request, context, countOnly)`, as an NSFetchRequestExpression prints itself.
                guard args.count == 3, case .constant(.int(let flag)) = args[2], flag == 0 || flag == 1 else {
                    throw ParseError(position: start.position, message: "FETCH needs a fetch request, a context and YES or NO at position \(start.position)")
                }
                return .fetchRequest(args[0], args[1], countOnly: flag == 1)
            case "CAST":
                guard args.count == 2 else {
                    throw ParseError(position: start.position, message: "CAST needs a value and a type name at position \(start.position)")
                }
                return .function("castObject:toType:", args)
            default:
                let written = args.isEmpty || name.hasSuffix(":") ? name : name + ":"
                guard let function = PredicateFunctions.arities.keys.first(where: { $0.lowercased() == written.lowercased() }) else {
                    throw ParseError(position: start.position, message: "unknown function '\(name)' at position \(start.position)")
                }
                // `max(1, 5, 10)`: the statistics functions take their arguments as one collection.
                if PredicateFunctions.statistics.contains(function), args.count != 1 { args = [.aggregate(args)] }
                guard PredicateFunctions.isKnown(function, argumentCount: args.count) else {
                    throw ParseError(position: start.position, message: "the function '\(name)' at position \(start.position) takes \(PredicateFunctions.arities[function] ?? 0) argument(s), not \(args.count)")
                }
                return .function(function, args)
            }
        }
    }

    // MARK: Format arguments

    private func formatArgument(_ specifier: FormatSpecifier, at token: PredicateToken) throws(ParseError) -> ExpressionNode {
        guard let argumentIndex = argumentIndexes[index], argumentIndex < arguments.count else {
            throw ParseError(position: token.position, message: "the format specifier at position \(token.position) has no argument (\(arguments.count) given)")
        }
        let argument = arguments[argumentIndex]
        let value = PredicateValue(argument)
        func mismatch(_ expected: String) -> ParseError {
            ParseError(position: token.position, message: "the argument for the format specifier at position \(token.position) is \(argument.map { "\(type(of: $0))" } ?? "nil"), expected \(expected)")
        }
        switch specifier {
        case .object:
            // An expression argument stands for itself: `%@ > 5` with a count-only
            // NSFetchRequestExpression, `%@.@count` with a SUBQUERY expression.
            if let expression = argument as? NSExpression { return expression.node }
            return .constant(value)
        case .keyPath:
            if let swiftKeyPath = argument as? AnyKeyPath {
                // A Swift key path where Apple's code passes `#keyPath(Item.name)`.
                do {
                    return .keyPath(try TypedKeyPaths.names(of: swiftKeyPath))
                } catch {
                    throw ParseError(position: token.position, message: "the argument for the format specifier at position \(token.position): \((error as NSError).localizedDescription)")
                }
            }
            guard case .string(let path) = value, !path.isEmpty else { throw mismatch("a key path string") }
            let keys = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !keys.contains(where: \.isEmpty) else { throw mismatch("a key path string without empty keys") }
            if keys[0].uppercased() == "SELF" { return keys.count == 1 ? .evaluatedObject : .keyPath(Array(keys.dropFirst())) }
            return .keyPath(keys)
        case .signedInteger, .unsignedInteger:
            switch value {
            case .int: return .constant(value)
            case .double(let d) where d.rounded(.towardZero) == d && abs(d) < 9.2e18: return .constant(.int(Int64(d)))
            case .double(let d): return .constant(.double(d))
            default: throw mismatch("an integer")
            }
        case .floatingPoint:
            switch value {
            case .int(let v): return .constant(.double(Double(v)))
            case .double: return .constant(value)
            default: throw mismatch("a floating-point number")
            }
        case .character:
            guard case .int(let code) = value, let scalar = UInt32(exactly: code).flatMap(Unicode.Scalar.init) else {
                throw mismatch("a character code")
            }
            return .constant(.string(String(scalar)))
        case .string:
            guard case .string = value else { throw mismatch("a string") }
            return .constant(value)
        }
    }
}
