import Foundation

// How a `rethrows` method throws an error its block threw on another queue (the block ran in a
// `Result`, handed back through a continuation): `rethrowing(outcome, as: block)` throws only
// as `block` throws, which the compiler's `rethrows` check accepts.

/// Returns the value or throws the error of `block`'s outcome. `block` is never called: it only
/// types the error as `block`'s.
internal func rethrowing<T, Failure: Error>(_ outcome: Result<T, Failure>, as block: () throws(Failure) -> T) throws(Failure) -> T {
    try outcome.get()
}

/// ``rethrowing(_:as:)`` for a block that takes a context.
internal func rethrowing<T, Failure: Error>(_ outcome: Result<T, Failure>,
                                            as block: (NSManagedObjectContext) throws(Failure) -> T) throws(Failure) -> T {
    try outcome.get()
}
