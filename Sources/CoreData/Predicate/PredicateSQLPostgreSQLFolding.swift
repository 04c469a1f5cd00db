import Foundation

// `[c]`/`[d]` in the PostgreSQL dialect: both sides of a comparison folded as
// ``PredicateStrings/fold(_:_:)`` folds them, a constant in Swift before it is bound, anything
// else by the SQL function the store creates (``PostgreSQLFoldFunction``), then compared byte by
// byte as without options.

extension PredicateSQLCompiler {
    /// `operand` folded for `options`: a bound string folded here, another operand through
    /// `cd_fold_v1`; unchanged without `[c]`/`[d]`.
    ///
    /// ```swift
    /// compiler.postgreSQLFolded("t0.\"ZNAME\"", [.caseInsensitive, .diacriticInsensitive])
    /// // cd_fold_v1(t0."ZNAME", 3)
    /// ```
    func postgreSQLFolded(_ operand: SQLFragment, _ options: ComparisonOptions) -> SQLFragment {
        let folding = options.folding
        guard !folding.isEmpty else { return operand }
        if operand.sql == "?", operand.bindings.count == 1, case .string(let text) = operand.bindings[0] {
            return .bind(.string(PredicateStrings.fold(text, folding)))
        }
        return "\(PostgreSQLFoldFunction.name)(" + operand + ", \(folding.rawValue))"
    }
}
