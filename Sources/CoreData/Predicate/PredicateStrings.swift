import Foundation
import Synchronization

/// String comparison shared by the in-memory evaluator and the SQL functions the SQLite store
/// registers, so both give the same answer by construction.
///
/// - Plain comparisons are by UTF-8 bytes, as SQLite's BINARY collation.
/// - `[c]` and `[d]` fold both operands with `String.folding(options:locale:)` (locale-independent)
///   and then compare bytes.
/// - `BEGINSWITH`, `ENDSWITH`, `CONTAINS` with an empty right-hand string are false, as in Cocoa
///   (`-hasPrefix:` with `@""` is `NO`).
/// - `LIKE` matches Unicode scalars: `*` any run, `?` exactly one, `\` escapes the next character.
/// - `MATCHES` is an ICU regular expression that must match the whole string.
internal enum PredicateStrings {
    static func fold(_ string: String, _ options: ComparisonOptions) -> String {
        let folding = options.foldingOptions
        if folding.isEmpty { return string }
        if let ascii = foldASCII(string, caseInsensitive: folding.contains(.caseInsensitive)) { return ascii }
        return string.folding(options: folding, locale: nil)
    }

    /// `fold` for ASCII text without Foundation (about 10,000 instructions a call on Linux):
    /// ASCII has no diacritics, and its case folding is `A`–`Z` to `a`–`z`. `nil` for other text.
    /// (`PredicateStringsTests` checks it against Foundation for every ASCII character.)
    static func foldASCII(_ string: String, caseInsensitive: Bool) -> String? {
        let folded: String?? = string.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            var hasUpper = false
            for byte in bytes {
                if byte >= 0x80 { return nil }
                if byte >= 0x41 && byte <= 0x5A { hasUpper = true }
            }
            guard caseInsensitive && hasUpper else { return string }
            return String(unsafeUninitializedCapacity: bytes.count) { buffer in
                for (offset, byte) in bytes.enumerated() {
                    buffer[offset] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                }
                return bytes.count
            }
        }
        return folded ?? nil
    }

    static func equal(_ x: String, _ y: String, options: ComparisonOptions) -> Bool {
        fold(x, options).utf8.elementsEqual(fold(y, options).utf8)
    }

    /// Byte-wise order, as SQLite's BINARY collation (`memcmp`, then length).
    static func compare(_ x: String, _ y: String) -> ComparisonResult {
        var a = x.utf8.makeIterator()
        var b = y.utf8.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let l?, let r?):
                if l < r { return .orderedAscending }
                if l > r { return .orderedDescending }
            }
        }
    }

    static func compareBytes(_ x: [UInt8], _ y: [UInt8]) -> ComparisonResult {
        for (l, r) in zip(x, y) where l != r { return l < r ? .orderedAscending : .orderedDescending }
        return x.count < y.count ? .orderedAscending : (x.count > y.count ? .orderedDescending : .orderedSame)
    }

    /// `lhs op rhs` for the string operators (and `CONTAINS` as substring, `IN` as `rhs CONTAINS lhs`).
    static func evaluate(_ op: ComparisonOperator, _ lhs: String, _ rhs: String, options: ComparisonOptions) -> Bool {
        switch op {
        case .beginsWith:
            let pattern = Array(fold(rhs, options).utf8)
            return !pattern.isEmpty && fold(lhs, options).utf8.starts(with: pattern)
        case .endsWith:
            let pattern = Array(fold(rhs, options).utf8)
            let text = Array(fold(lhs, options).utf8)
            return !pattern.isEmpty && text.count >= pattern.count && text[(text.count - pattern.count)...].elementsEqual(pattern)
        case .contains:
            return containsBytes(Array(fold(lhs, options).utf8), Array(fold(rhs, options).utf8))
        case .in:
            return containsBytes(Array(fold(rhs, options).utf8), Array(fold(lhs, options).utf8))
        case .like:
            return like(Array(fold(lhs, options).unicodeScalars), pattern: Array(fold(rhs, options).unicodeScalars))
        case .matches:
            return matches(lhs, pattern: rhs, options: options)
        case .equalTo: return equal(lhs, rhs, options: options)
        case .notEqualTo: return !equal(lhs, rhs, options: options)
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            let result = compare(fold(lhs, options), fold(rhs, options))
            switch op {
            case .lessThan: return result == .orderedAscending
            case .lessThanOrEqualTo: return result != .orderedDescending
            case .greaterThan: return result == .orderedDescending
            default: return result != .orderedAscending
            }
        case .between: return false
        }
    }

    /// Whether `pattern` occurs in `text`. UTF-8 is self-synchronising, so a byte match is a
    /// match of whole scalars.
    private static func containsBytes(_ text: [UInt8], _ pattern: [UInt8]) -> Bool {
        guard !pattern.isEmpty, pattern.count <= text.count else { return false }
        let first = pattern[0]
        var start = 0
        let last = text.count - pattern.count
        while start <= last {
            if text[start] == first && text[start..<(start + pattern.count)].elementsEqual(pattern) { return true }
            start += 1
        }
        return false
    }

    /// Wildcard matching without backtracking blow-up: the classic greedy-star algorithm.
    private static func like(_ text: [Unicode.Scalar], pattern: [Unicode.Scalar]) -> Bool {
        // Tokenise the pattern: nil = `*`, "?" wildcard marked separately.
        enum Token: Equatable { case star, one, literal(Unicode.Scalar) }
        var tokens: [Token] = []
        var index = 0
        while index < pattern.count {
            let scalar = pattern[index]
            if scalar == "\\", index + 1 < pattern.count {
                tokens.append(.literal(pattern[index + 1]))
                index += 2
                continue
            }
            tokens.append(scalar == "*" ? .star : (scalar == "?" ? .one : .literal(scalar)))
            index += 1
        }
        var t = 0, p = 0
        var starP = -1, starT = 0
        while t < text.count {
            if p < tokens.count {
                switch tokens[p] {
                case .star:
                    starP = p; starT = t; p += 1
                    continue
                case .one:
                    t += 1; p += 1
                    continue
                case .literal(let scalar) where scalar == text[t]:
                    t += 1; p += 1
                    continue
                default: break
                }
            }
            guard starP >= 0 else { return false }
            p = starP + 1
            starT += 1
            t = starT
        }
        while p < tokens.count, tokens[p] == .star { p += 1 }
        return p == tokens.count
    }

    private static func matches(_ text: String, pattern: String, options: ComparisonOptions) -> Bool {
        var regexOptions: NSRegularExpression.Options = []
        if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
        let subject = options.contains(.diacriticInsensitive) ? fold(text, [.diacriticInsensitive]) : text
        guard let regex = fullMatchRegex(pattern, regexOptions) else { return false }
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }

    /// The regular expression that matches all of a text that `pattern` matches, `nil` for a
    /// pattern that is not one (Apple's raises): the pattern is checked alone first, so that an
    /// unbalanced `)` cannot close the group that anchors it (`a)|(b` would match "axyz"). The
    /// last ones made are kept: a fetch evaluates one pattern for every row.
    static func fullMatchRegex(_ pattern: String, _ options: NSRegularExpression.Options) -> NSRegularExpression? {
        let key = "\(options.rawValue):" + pattern
        if let cached = regexCache.withLock({ $0[key] }) { return cached.regex }
        let regex = (try? NSRegularExpression(pattern: pattern, options: options)) == nil
            ? nil : try? NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options)
        regexCache.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }
            cache[key] = CachedRegex(regex: regex)
        }
        return regex
    }

    private struct CachedRegex: @unchecked Sendable { let regex: NSRegularExpression? }
    private static let regexCache = Mutex<[String: CachedRegex]>([:])
}
