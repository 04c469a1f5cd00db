import Foundation

// `LIKE` and `MATCHES` in the PostgreSQL dialect. Core Data's `LIKE` (``PredicateStrings``) matches Unicode
// scalars: `*` any run, `?` exactly one, `\` takes the next character literally (a `\` at the
// end is itself). A constant pattern becomes PostgreSQL's `LIKE` pattern with the same meaning
// (`%`, `_`, and `\` escaping `%`, `_` and `\` written as themselves), compared byte by byte
// (`COLLATE "C"`), where `_` is one code point as `?` is one scalar. With `[c]`/`[d]` both sides
// come folded (`PredicateSQLPostgreSQLFolding.swift`). A pattern read from a column still throws 134091.
//
// `MATCHES` is an ICU regular expression matching the whole string. A constant pattern that ICU
// rejects matches nothing, as in memory. Of the others, the part of the syntax that PostgreSQL's
// regular expressions read identically is translated (`~ '^(?:…)$'`, byte order): literal
// characters, `.` (any character but ICU's line terminators), `*`, `+`, `?` after an atom,
// `|`, groups `( … )`, and classes `[…]`/`[^…]` of letters, digits, spaces and ranges of them.
// Anything else (`\w`, `{2}`, lazy or possessive quantifiers, anchors, `(?…)`, POSIX or nested
// classes) throws 134091 naming the pattern.

extension PredicateSQLCompiler {
    /// `text LIKE pattern` in PostgreSQL for a bound constant pattern; throws for a pattern that
    /// is a column or an expression.
    ///
    /// ```swift
    /// try compiler.postgreSQLLike("t0.\"ZNAME\"", .bind(.string("a*b?")))
    /// // (t0."ZNAME" IS NOT NULL AND t0."ZNAME" COLLATE "C" LIKE ?), bound to "a%b_"
    /// ```
    /// `unfoldedText` is `text` before a `[c]`/`[d]` fold, for the NULL test.
    func postgreSQLLike(_ text: SQLFragment, _ pattern: SQLFragment, unfoldedText: SQLFragment? = nil) throws(CompileError) -> SQLFragment {
        guard pattern.sql == "?", pattern.bindings.count == 1, case .string(let like) = pattern.bindings[0] else {
            throw CompileError(reason: "LIKE with a pattern that is not a constant is not supported by the PostgreSQL store yet")
        }
        if like.utf8.contains(0) { return .alwaysFalse } // (no stored text holds a NUL: `bindsNUL`)
        return "(" + (unfoldedText ?? text) + " IS NOT NULL AND " + text + " COLLATE \"C\" LIKE " + .bind(.string(Self.postgreSQLLikePattern(like))) + ")"
    }

    /// Core Data's `LIKE` pattern as PostgreSQL's (`a*b?` is `a%b_`, `100%` is `100\%`).
    static func postgreSQLLikePattern(_ pattern: String) -> String {
        let scalars = Array(pattern.unicodeScalars)
        var result = String.UnicodeScalarView()
        func literal(_ scalar: Unicode.Scalar) {
            if scalar == "%" || scalar == "_" || scalar == "\\" { result.append("\\") }
            result.append(scalar)
        }
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\", index + 1 < scalars.count {
                literal(scalars[index + 1])
                index += 2
                continue
            }
            switch scalar {
            case "*": result.append("%")
            case "?": result.append("_")
            default: literal(scalar)
            }
            index += 1
        }
        return String(result)
    }

    /// `text MATCHES pattern` in PostgreSQL for a bound constant pattern (see the file's
    /// comment for the syntax translated); throws for other patterns.
    ///
    /// ```swift
    /// try compiler.postgreSQLMatches("t0.\"ZNAME\"", .bind(.string("[a-z]+")))
    /// // (t0."ZNAME" IS NOT NULL AND t0."ZNAME" COLLATE "C" ~ ?), bound to "^(?:[a-z]+)$"
    /// ```
    func postgreSQLMatches(_ text: SQLFragment, _ pattern: SQLFragment) throws(CompileError) -> SQLFragment {
        guard pattern.sql == "?", pattern.bindings.count == 1, case .string(let regex) = pattern.bindings[0] else {
            throw CompileError(reason: "MATCHES with a pattern that is not a constant is not supported by the PostgreSQL store yet")
        }
        guard PredicateStrings.fullMatchRegex(regex, []) != nil else {
            return .alwaysFalse   // ICU rejects it: it matches nothing, as in memory
        }
        guard let translated = Self.postgreSQLRegex(regex) else {
            throw CompileError(reason: "MATCHES '\(regex)' uses regular-expression syntax the PostgreSQL store does not translate yet (it translates literal characters, ., *, +, ?, |, groups and classes of letters, digits and ranges)")
        }
        return "(" + text + " IS NOT NULL AND " + text + " COLLATE \"C\" ~ " + .bind(.string("^(?:" + translated + ")$")) + ")"
    }

    /// An ICU pattern (that ICU accepts) as a PostgreSQL regular expression with the same
    /// matches, or `nil` when it uses syntax outside the translated part.
    static func postgreSQLRegex(_ pattern: String) -> String? {
        let scalars = Array(pattern.unicodeScalars)
        let special: Set<Unicode.Scalar> = ["\\", ".", "^", "$", "|", "?", "*", "+", "(", ")", "[", "]", "{", "}"]
        func classMember(_ scalar: Unicode.Scalar) -> Bool {
            scalar == " " || scalar.properties.isAlphabetic || scalar.properties.numericType == .decimal
        }
        var result = ""
        var depth = 0
        var afterAtom = false
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            switch scalar {
            case ".":
                result += "[^\\u000a\\u000b\\u000c\\u000d\\u0085\\u2028\\u2029]"
                afterAtom = true
            case "*", "+", "?":
                guard afterAtom else { return nil }
                result.unicodeScalars.append(scalar)
                afterAtom = false   // no lazy or possessive quantifier, no quantifier of a quantifier
            case "|":
                result += "|"
                afterAtom = false
            case "(":
                guard index < scalars.count, scalars[index] != "?", scalars[index] != ")" else { return nil }
                depth += 1
                result += "("
                afterAtom = false
            case ")":
                guard depth > 0, afterAtom || result.last == "*" || result.last == "+" || result.last == "?" else { return nil }
                depth -= 1
                result += ")"
                afterAtom = true
            case "[":
                var members = "["
                if index < scalars.count, scalars[index] == "^" { members += "^"; index += 1 }
                var count = 0
                while index < scalars.count, scalars[index] != "]" {
                    let low = scalars[index]
                    guard classMember(low) else { return nil }
                    members.unicodeScalars.append(low)
                    index += 1
                    if index + 1 < scalars.count, scalars[index] == "-", scalars[index + 1] != "]" {
                        guard classMember(scalars[index + 1]) else { return nil }
                        members += "-"
                        members.unicodeScalars.append(scalars[index + 1])
                        index += 2
                    }
                    count += 1
                }
                guard count > 0, index < scalars.count else { return nil }
                index += 1
                result += members + "]"
                afterAtom = true
            default:
                guard !special.contains(scalar), scalar.value >= 0x20 else { return nil }
                result.unicodeScalars.append(scalar)
                afterAtom = true
            }
        }
        return depth == 0 ? result : nil
    }
}
