import Foundation

// `IN` a list of constants, in PostgreSQL: each kind of value the list holds is one bound
// array (`"ZYEAR" = ANY(CAST($1 AS bigint[]))`), so a statement does not change with the
// list's length (one prepared statement for every length) and a list may be longer than the
// 65,535 parameters a statement can take. The array goes as the text of an array literal,
// typed by the cast, each element in the form the server reads back exactly.

extension PredicateSQLCompiler {
    /// `column` equal to one of `items` (bound values, as the `IN` list binds them), NULL
    /// never: `(column IS NOT NULL AND (compared = ANY(CAST(? AS bigint[])) OR …))`, where
    /// `compared` is the column as compared (folded for `[c]`/`[d]`), one array
    /// per PostgreSQL type among the items. A value no column can hold (text with a NUL, an
    /// object without a key) is left out: it equals nothing.
    static func postgreSQLMembership(_ column: SQLFragment, _ compared: SQLFragment, _ items: [SQLFragment]) -> SQLFragment {
        var arrays: [(type: String, elements: [String])] = []
        for item in items {
            guard let value = item.bindings.first, let (type, element) = postgreSQLArrayElement(value) else { continue }
            if let index = arrays.firstIndex(where: { $0.type == type }) {
                arrays[index].elements.append(element)
            } else {
                arrays.append((type, [element]))
            }
        }
        guard !arrays.isEmpty else { return .alwaysFalse }
        let tests = arrays.map { array in
            compared + " = ANY(CAST(" + SQLFragment.bind(.string("{" + array.elements.joined(separator: ",") + "}")) + " AS \(array.type)[]))"
        }
        let any = tests.count == 1 ? tests[0] : "(" + SQLFragment.joined(tests, separator: " OR ") + ")"
        return "(" + column + " IS NOT NULL AND " + any + ")"
    }

    /// The array type of `value` and its element in an array literal; `nil` for what no
    /// column holds.
    private static func postgreSQLArrayElement(_ value: StoreValue) -> (String, String)? {
        switch value {
        case .int(let v): return ("bigint", String(v))
        case .bool(let v): return ("bigint", v ? "1" : "0")
        case .double(let v): return ("double precision", postgreSQLDouble(v))
        case .date(let v): return ("double precision", postgreSQLDouble(v.timeIntervalSinceReferenceDate))
        case .string(let v): return v.utf8.contains(0) ? nil : ("text", quotedArrayElement(v))
        case .url(let v): return ("text", quotedArrayElement(v.absoluteString))
        case .data(let v): return ("bytea", quotedArrayElement("\\x" + hex(v)))
        case .uuid(let v): return ("bytea", quotedArrayElement("\\x" + hex(withUnsafeBytes(of: v.uuid) { Data($0) })))
        case .decimal(let v): return ("numeric", v.isNaN ? "NaN" : v.description)
        case .objectID(let id): return id.primaryKey.map { ("bigint", String($0)) }
        case .null, .object: return nil
        }
    }

    /// A double as PostgreSQL reads it back exactly (Swift's shortest round-trip form).
    private static func postgreSQLDouble(_ v: Double) -> String {
        if v.isNaN { return "NaN" }
        if v.isInfinite { return v < 0 ? "-Infinity" : "Infinity" }
        return "\(v)"
    }

    /// `text` quoted as an element of an array literal: in double quotes, `"` and `\` escaped.
    private static func quotedArrayElement(_ text: String) -> String {
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        for character in text.unicodeScalars {
            if character == "\"" || character == "\\" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(character)
        }
        return result + "\""
    }
}
