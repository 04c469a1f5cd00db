import Foundation

/// The errors predicates and sort descriptors throw.
///
/// - A malformed format string: `NSCocoaErrorDomain`, code 2048 (`NSFormattingError`), with the
///   0-based character offset of the problem in `userInfo[PredicateErrors.positionKey]` and the
///   format in `userInfo[PredicateErrors.formatKey]`. The message names the position and what was
///   expected: `Unable to parse the format string "name ==": expected an expression at position 7, found the end of the string`.
/// - A predicate or sort the SQLite store cannot run (block predicates, comparator sort
///   descriptors, to-many keys without `ANY`/`ALL`/`NONE`, …): `NSCocoaErrorDomain`, code 134091
///   (`NSPersistentStoreUnsupportedRequestTypeError`), message starting
///   `unimplemented SQL generation for predicate` or `unsupported sort descriptor`, as Apple's.
internal enum PredicateErrors {
    /// `userInfo` key: the 0-based character offset in the format string where parsing failed.
    static let positionKey = "NSPredicateFormatErrorPosition"
    /// `userInfo` key: the format string that failed to parse.
    static let formatKey = "NSPredicateFormatString"
    /// `NSFormattingError`.
    static let formattingErrorCode = 2048

    static func parse(format: String, position: Int, message: String) -> NSError {
        NSError(domain: NSCocoaErrorDomain, code: formattingErrorCode, userInfo: [
            NSLocalizedDescriptionKey: "Unable to parse the format string \"\(format)\": \(message)",
            positionKey: position,
            formatKey: format,
        ])
    }

    static func unsupportedPredicate(_ reason: String, in predicate: CustomStringConvertible? = nil) -> NSError {
        let suffix = predicate.map { " (\($0))" } ?? ""
        return CoreDataError.make(.unsupportedRequestType, "unimplemented SQL generation for predicate\(suffix): \(reason)")
    }

    static func unsupportedExpression(_ reason: String, column: String) -> NSError {
        CoreDataError.make(.unsupportedRequestType, "unsupported expression for the dictionary fetch column '\(column)': \(reason)")
    }

    static func unsupportedSort(_ reason: String) -> NSError {
        CoreDataError.make(.unsupportedRequestType, "unsupported sort descriptor: \(reason)")
    }
}
