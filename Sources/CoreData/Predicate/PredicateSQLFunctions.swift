import CSQLite
import Foundation

// The SQL functions and collations compiled predicates and sort orders use. Each calls the same
// Swift code the in-memory evaluator and comparator call, so the two agree by construction.
//
// - `cd_fold(value, flags)`: a TEXT value folded for `[c]` (1), `[d]` (2) or both (3); any
//   other value unchanged.
// - `cd_strop(code, lhs, rhs, flags)`: `1` or `0` for BEGINSWITH (1), ENDSWITH (2), CONTAINS (3),
//   LIKE (4), MATCHES (5), IN (6, `rhs` contains `lhs`), with `[c]`/`[d]` flags; `0` when either
//   operand is not TEXT (so `NULL` never leaks into the condition).
// - `cd_unhex(text)`: the blob a hex string spells (long `IN` lists bound as one JSON array).
// - `cd_sum(value)`: an aggregate, the sum as `PredicateSum` computes it.
// - `cd_fn(name, args…)`: `PredicateFunctions.apply(name, args)` for a function of stored values
//   (`price * 2`, `abs:(delta)`, `uppercase:(name)`); INTEGER, REAL, TEXT and NULL arguments.
// - Collations `CD_LOCALIZED`, `CD_LOCALIZED_NOCASE`, `CD_LOCALIZED_STANDARD` for the
//   `localizedCompare:`, `localizedCaseInsensitiveCompare:`, `localizedStandardCompare:` sort selectors.

extension PredicateSQLCompiler {
    /// Installs the functions and collations compiled predicates use on a connection. Call once
    /// per connection, right after opening it.
    ///
    /// ```swift
    /// var db: OpaquePointer?
    /// sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
    /// PredicateSQLCompiler.registerFunctions(on: db!)
    /// ```
    static func registerFunctions(on db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(db, "cd_fold", 2, flags, nil, { context, count, values in
            guard let context, let values, count == 2 else { return }
            guard let text = PredicateSQLFunctionSupport.text(values[0]) else {
                sqlite3_result_value(context, values[0])
                return
            }
            let options = ComparisonOptions(rawValue: Int(sqlite3_value_int64(values[1]))).folding
            PredicateSQLFunctionSupport.resultText(context, PredicateStrings.fold(text, options))
        }, nil, nil, nil)

        sqlite3_create_function_v2(db, "cd_strop", 4, flags, nil, { context, count, values in
            guard let context, let values, count == 4 else { return }
            guard let op = PredicateSQLCompiler.stringOperator(code: Int(sqlite3_value_int64(values[0]))),
                  let lhs = PredicateSQLFunctionSupport.text(values[1]),
                  let rhs = PredicateSQLFunctionSupport.text(values[2]) else {
                sqlite3_result_int(context, 0)
                return
            }
            let options = ComparisonOptions(rawValue: Int(sqlite3_value_int64(values[3]))).folding
            sqlite3_result_int(context, PredicateStrings.evaluate(op, lhs, rhs, options: options) ? 1 : 0)
        }, nil, nil, nil)

        // `cd_unhex(text)`: the blob a hex string spells (long IN lists of blobs, bound as JSON).
        sqlite3_create_function_v2(db, "cd_unhex", 1, flags, nil, { context, count, values in
            guard let context, let values, count == 1, let text = PredicateSQLFunctionSupport.text(values[0]) else { return }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.utf8.count / 2)
            var high: UInt8?
            for c in text.utf8 {
                let nibble: UInt8
                switch c {
                case 48...57: nibble = c - 48
                case 97...102: nibble = c - 87
                case 65...70: nibble = c - 55
                default: sqlite3_result_null(context); return
                }
                if let h = high { bytes.append(h << 4 | nibble); high = nil } else { high = nibble }
            }
            guard !bytes.isEmpty else { sqlite3_result_zeroblob(context, 0); return }
            bytes.withUnsafeBytes { buffer in
                sqlite3_result_blob64(context, buffer.baseAddress, sqlite3_uint64(buffer.count), SQLITE_TRANSIENT_DESTRUCTOR)
            }
        }, nil, nil, nil)

        // Not deterministic: `random` and `now` are functions too.
        sqlite3_create_function_v2(db, "cd_fn", -1, SQLITE_UTF8, nil, { context, count, values in
            guard let context, let values, count >= 1, let name = PredicateSQLFunctionSupport.text(values[0]) else { return }
            var args: [PredicateValue] = []
            for index in 1..<Int(count) {
                let value = values[index]
                switch sqlite3_value_type(value) {
                case SQLITE_INTEGER: args.append(.int(sqlite3_value_int64(value)))
                case SQLITE_FLOAT: args.append(.double(sqlite3_value_double(value)))
                case SQLITE_TEXT: args.append(PredicateSQLFunctionSupport.text(value).map { .string($0) } ?? .null)
                default: args.append(.null)
                }
            }
            switch PredicateFunctions.apply(name, args) {
            case .int(let v): sqlite3_result_int64(context, v)
            case .double(let v): sqlite3_result_double(context, v)
            case .string(let v): PredicateSQLFunctionSupport.resultText(context, v)
            case .date(let v): sqlite3_result_double(context, v.timeIntervalSinceReferenceDate)
            default: sqlite3_result_null(context)
            }
        }, nil, nil, nil)

        // `@sum` and `sum:` of stored values: integers while they fit, else the sum as a double
        // (SQLite's SUM fails on overflow), as `PredicateFunctions.sum`.
        sqlite3_create_function_v2(db, "cd_sum", 1, flags, nil, nil, { context, count, values in
            guard let context, let values, count == 1,
                  let state = sqlite3_aggregate_context(context, Int32(MemoryLayout<PredicateSum>.stride)) else { return }
            let sum = state.assumingMemoryBound(to: PredicateSum.self)
            switch sqlite3_value_type(values[0]) {
            case SQLITE_INTEGER: sum.pointee.add(.int(sqlite3_value_int64(values[0])))
            case SQLITE_FLOAT: sum.pointee.add(.double(sqlite3_value_double(values[0])))
            default: break
            }
        }, { context in
            guard let context else { return }
            let state = sqlite3_aggregate_context(context, 0)
            switch state?.assumingMemoryBound(to: PredicateSum.self).pointee.value ?? .int(0) {
            case .double(let v): sqlite3_result_double(context, v)
            case .int(let v): sqlite3_result_int64(context, v)
            default: sqlite3_result_int64(context, 0)
            }
        }, nil)

        for comparison in [SortKey.Comparison.localizedCompare, .localizedCaseInsensitiveCompare, .localizedStandardCompare] {
            guard let name = comparison.collationName else { continue }
            let compare: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32
            switch comparison {
            case .localizedCompare:
                compare = { _, n1, p1, n2, p2 in
                    PredicateSQLFunctionSupport.collate(n1, p1, n2, p2, .localizedCompare)
                }
            case .localizedCaseInsensitiveCompare:
                compare = { _, n1, p1, n2, p2 in
                    PredicateSQLFunctionSupport.collate(n1, p1, n2, p2, .localizedCaseInsensitiveCompare)
                }
            default:
                compare = { _, n1, p1, n2, p2 in
                    PredicateSQLFunctionSupport.collate(n1, p1, n2, p2, .localizedStandardCompare)
                }
            }
            sqlite3_create_collation_v2(db, name, SQLITE_UTF8, nil, compare, nil)
        }
    }
}

/// Reading and writing SQLite values for the functions above.
internal enum PredicateSQLFunctionSupport {
    /// The value as a Swift string if it is TEXT (embedded NULs kept), else `nil`.
    static func text(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        guard let bytes = sqlite3_value_text(value) else { return count == 0 ? "" : nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    static func resultText(_ context: OpaquePointer, _ text: String) {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    sqlite3_result_text(context, base, Int32(chars.count), transient)
                } else {
                    sqlite3_result_text(context, "", 0, transient)
                }
            }
        }
    }

    static func collate(_ n1: Int32, _ p1: UnsafeRawPointer?, _ n2: Int32, _ p2: UnsafeRawPointer?, _ comparison: SortKey.Comparison) -> Int32 {
        let a = p1.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(n1)), as: UTF8.self) } ?? ""
        let b = p2.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: Int(n2)), as: UTF8.self) } ?? ""
        switch SortKey.compareStrings(a, b, comparison) {
        case .orderedAscending: return -1
        case .orderedDescending: return 1
        case .orderedSame: return 0
        }
    }
}
