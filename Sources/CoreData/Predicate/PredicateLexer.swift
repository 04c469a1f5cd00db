import Foundation

/// One token of a predicate format string. `position` is its offset in the string's Unicode
/// scalars (the same as the character offset for all but combining sequences).
internal struct PredicateToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// A name: a key, or a keyword (matched case-insensitively by the parser).
        case identifier(String)
        /// `#name`: a name that is never a keyword.
        case escapedIdentifier(String)
        case integer(Int64)
        case double(Double)
        case string(String)
        /// `%@`, `%K`, `%d`, `%f`, ….
        case format(FormatSpecifier)
        /// `$NAME`.
        case variable(String)
        /// Operators and punctuation: `==`, `<=`, `(`, `{`, `,`, `.`, `&&`, …, with `=>`, `=<`
        /// and `<>` already normalised to `>=`, `<=` and `!=`.
        case symbol(String)
        case end
    }
    var kind: Kind
    var position: Int
}

/// A printf-style specifier and the kind of argument it takes.
internal enum FormatSpecifier: Sendable, Equatable {
    /// `%@`: any object or value.
    case object
    /// `%K`: a key path, given as a string.
    case keyPath
    /// `%d %i %ld %lld %hd %zd …`.
    case signedInteger
    /// `%u %lu %llu %o %x %X …`.
    case unsignedInteger
    /// `%f %lf %e %g %a …`.
    case floatingPoint
    /// `%c`: a character code.
    case character
    /// `%s`: a string.
    case string
}

internal struct PredicateLexError: Error {
    var position: Int
    var message: String
}

/// Splits a predicate format string into tokens.
internal struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ format: String) {
        scalars = Array(format.unicodeScalars)
    }

    static func tokenize(_ format: String) throws(PredicateLexError) -> [PredicateToken] {
        var lexer = PredicateLexer(format)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private static func isIdentifierStart(_ s: Unicode.Scalar) -> Bool {
        s == "_" || s.properties.isAlphabetic
    }

    private static func isIdentifierPart(_ s: Unicode.Scalar) -> Bool {
        isIdentifierStart(s) || s.properties.numericType != nil
    }

    private static func isDigit(_ s: Unicode.Scalar) -> Bool { s >= "0" && s <= "9" }

    mutating func next() throws(PredicateLexError) -> PredicateToken {
        while let s = peek(), s.properties.isWhitespace { index += 1 }
        let start = index
        guard let s = peek() else { return PredicateToken(kind: .end, position: start) }

        if Self.isIdentifierStart(s) {
            var name = readIdentifier()
            // `sum:(price)`: Apple's spelling of a function call, the selector name with its colon.
            if peek() == ":", peek(1) == "(" {
                name += ":"
                index += 1
            }
            return PredicateToken(kind: .identifier(name), position: start)
        }
        if Self.isDigit(s) {
            return PredicateToken(kind: try readNumber(), position: start)
        }
        switch s {
        case "'", "\"":
            return PredicateToken(kind: .string(try readString(quote: s)), position: start)
        case "$":
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw PredicateLexError(position: start, message: "expected a variable name after '$' at position \(start)")
            }
            return PredicateToken(kind: .variable(readIdentifier()), position: start)
        case "#":
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw PredicateLexError(position: start, message: "expected a key name after '#' at position \(start)")
            }
            return PredicateToken(kind: .escapedIdentifier(readIdentifier()), position: start)
        case "@":
            index += 1
            guard let first = peek(), Self.isIdentifierStart(first) else {
                throw PredicateLexError(position: start, message: "expected a collection operator name after '@' at position \(start)")
            }
            return PredicateToken(kind: .escapedIdentifier("@" + readIdentifier()), position: start)
        case "%":
            return PredicateToken(kind: .format(try readFormat()), position: start)
        default:
            break
        }
        let two = peek(1).map { String(s) + String($0) } ?? ""
        let normalizedTwo: [String: String] = ["==": "==", "!=": "!=", "<>": "!=", "<=": "<=", "=<": "<=",
                                                ">=": ">=", "=>": ">=", "&&": "&&", "||": "||", "**": "**"]
        if let symbol = normalizedTwo[two] {
            index += 2
            return PredicateToken(kind: .symbol(symbol), position: start)
        }
        let singles: Set<Unicode.Scalar> = ["=", "<", ">", "!", "(", ")", "{", "}", "[", "]", ",", ".", "+", "-", "*", "/"]
        if singles.contains(s) {
            index += 1
            return PredicateToken(kind: .symbol(s == "=" ? "==" : String(s)), position: start)
        }
        throw PredicateLexError(position: start, message: "unexpected character '\(s)' at position \(start)")
    }

    private mutating func readIdentifier() -> String {
        var text = ""
        while let s = peek(), Self.isIdentifierPart(s) {
            text.unicodeScalars.append(s)
            index += 1
        }
        return text
    }

    private mutating func readNumber() throws(PredicateLexError) -> PredicateToken.Kind {
        let start = index
        if peek() == "0", let radixMark = peek(1), let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][radixMark] {
            index += 2
            var digits = ""
            while let s = peek(), s.properties.isASCIIHexDigit || Self.isIdentifierPart(s) {
                digits.unicodeScalars.append(s)
                index += 1
            }
            guard !digits.isEmpty, let value = UInt64(digits, radix: radix) else {
                throw PredicateLexError(position: start, message: "malformed number '0\(radixMark)\(digits)' at position \(start)")
            }
            return value <= UInt64(Int64.max) ? .integer(Int64(value)) : .double(Double(value))
        }
        var text = ""
        var isFloat = false
        while let s = peek(), Self.isDigit(s) { text.unicodeScalars.append(s); index += 1 }
        if peek() == ".", let after = peek(1), Self.isDigit(after) {
            isFloat = true
            text += "."
            index += 1
            while let s = peek(), Self.isDigit(s) { text.unicodeScalars.append(s); index += 1 }
        }
        if let e = peek(), e == "e" || e == "E" {
            var lookahead = 1
            if let sign = peek(1), sign == "+" || sign == "-" { lookahead = 2 }
            if let digit = peek(lookahead), Self.isDigit(digit) {
                isFloat = true
                for _ in 0..<lookahead { text.unicodeScalars.append(peek()!); index += 1 }
                while let s = peek(), Self.isDigit(s) { text.unicodeScalars.append(s); index += 1 }
            }
        }
        if let s = peek(), Self.isIdentifierPart(s) {
            throw PredicateLexError(position: index, message: "unexpected '\(s)' after the number \(text) at position \(index)")
        }
        if !isFloat, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text) else {
            throw PredicateLexError(position: start, message: "malformed number '\(text)' at position \(start)")
        }
        return .double(value)
    }

    private mutating func readString(quote: Unicode.Scalar) throws(PredicateLexError) -> String {
        let start = index
        index += 1
        var text = ""
        while true {
            guard let s = peek() else {
                throw PredicateLexError(position: start, message: "unterminated string starting at position \(start)")
            }
            index += 1
            if s == quote { return text }
            guard s == "\\" else { text.unicodeScalars.append(s); continue }
            guard let escaped = peek() else {
                throw PredicateLexError(position: start, message: "unterminated string starting at position \(start)")
            }
            index += 1
            switch escaped {
            case "n": text += "\n"
            case "t": text += "\t"
            case "r": text += "\r"
            case "0"..."7":
                // `\` and three octal digits (Apple's format syntax); `\0` alone is NUL.
                var octal = String(escaped)
                while octal.count < 3, let digit = peek(), ("0"..."7").contains(digit) {
                    octal.unicodeScalars.append(digit)
                    index += 1
                }
                guard octal.count == 3 || octal == "0", let code = UInt32(octal, radix: 8), let scalar = Unicode.Scalar(code) else {
                    throw PredicateLexError(position: index - octal.count - 1, message: "malformed octal escape \\\(octal) at position \(index - octal.count - 1)")
                }
                text.unicodeScalars.append(scalar)
            case "a": text += "\u{07}"
            case "b": text += "\u{08}"
            case "f": text += "\u{0C}"
            case "v": text += "\u{0B}"
            case "u", "U", "x", "X":
                let count = escaped == "u" || escaped == "U" ? 4 : 2
                var hex = ""
                for _ in 0..<count {
                    guard let h = peek(), h.properties.isASCIIHexDigit else { break }
                    hex.unicodeScalars.append(h)
                    index += 1
                }
                guard hex.count == count, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw PredicateLexError(position: index - hex.count - 2, message: "malformed \\\(escaped) escape at position \(index - hex.count - 2)")
                }
                text.unicodeScalars.append(scalar)
            default:
                // `\\`, `\'`, `\"` and any other escaped character stand for themselves.
                text.unicodeScalars.append(escaped)
            }
        }
    }

    private mutating func readFormat() throws(PredicateLexError) -> FormatSpecifier {
        let start = index
        index += 1
        guard let first = peek() else {
            throw PredicateLexError(position: start, message: "incomplete format specifier '%' at position \(start)")
        }
        switch first {
        case "@": index += 1; return .object
        case "K": index += 1; return .keyPath
        case "%":
            throw PredicateLexError(position: start, message: "'%%' (a literal percent sign) is only allowed inside a quoted string, at position \(start)")
        default: break
        }
        // Flags, width and precision are accepted and ignored; then length modifiers; then the conversion.
        while let s = peek(), "-+ #0123456789.".unicodeScalars.contains(s) { index += 1 }
        while let s = peek(), "hlqLzjt".unicodeScalars.contains(s) { index += 1 }
        guard let conversion = peek() else {
            throw PredicateLexError(position: start, message: "incomplete format specifier at position \(start)")
        }
        index += 1
        switch conversion {
        case "d", "i", "D": return .signedInteger
        case "u", "o", "x", "X", "U", "O": return .unsignedInteger
        case "f", "F", "e", "E", "g", "G", "a", "A": return .floatingPoint
        case "c", "C": return .character
        case "s", "S": return .string
        case "@": return .object
        default:
            throw PredicateLexError(position: start, message: "unsupported format specifier '%\(conversion)' at position \(start)")
        }
    }
}
