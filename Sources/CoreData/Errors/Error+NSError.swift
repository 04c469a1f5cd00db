import Foundation

extension Error {
    /// The error itself if it is an `NSError`, else `nil` (an app's own `Error` type).
    ///
    /// On Linux, `catch let error as NSError` and `error as? NSError` take every error for an
    /// `NSError`, as the compiler assumes the cast cannot fail (it warns that it "always
    /// succeeds"), and reading a plain Swift error through it crashes the process (Swift 6.3).
    /// The cast from `Any` checks the dynamic type. (`error as NSError`, a conversion, is safe:
    /// it wraps a Swift error in a new `NSError` named after its type.)
    internal var asNSError: NSError? { (self as Any) as? NSError }
}

extension CoreDataError {
    /// Throws validation's errors: one as it is (an app's own `Error` type included), several as
    /// `NSValidationMultipleErrorsError` (1560) with all of them, as `NSError`s, under
    /// `NSDetailedErrorsKey`.
    static func throwValidationErrors(_ errors: [any Error]) throws {
        if errors.count == 1 { throw errors[0] }
        guard errors.count > 1 else { return }
        throw make(.multipleValidation,
                   "Multiple validation errors occurred: " + errors.map(\.localizedDescription).joined(separator: "; "),
                   extra: [NSDetailedErrorsKey: errors.map { $0.asNSError ?? ($0 as NSError) }])
    }
}
