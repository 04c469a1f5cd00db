import Foundation
import Testing

/// A malformed input for a parameterized test of a reader: its bytes, a name for the test's
/// output, and the fragments the reader's error message must contain.
struct BrokenInput: Sendable, CustomTestStringConvertible {
    let data: @Sendable () -> Data
    let fragments: [String]
    let testDescription: String

    init(_ name: String, _ fragments: [String], _ data: @escaping @Sendable () -> Data) {
        testDescription = name
        self.fragments = fragments
        self.data = data
    }
}
