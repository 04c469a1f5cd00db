import Foundation
import Testing
@testable import CoreData

@Suite("Predicate strings: folding")
struct PredicateStringsTests {
    /// The ASCII fast path gives exactly what Foundation's folding gives, for every ASCII
    /// character alone and in a string, under `[c]`, `[d]` and `[cd]`.
    @Test(arguments: [ComparisonOptions.caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]])
    func asciiFoldingMatchesFoundation(options: ComparisonOptions) {
        let characters = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        for text in characters + [characters.joined(), "Hello, World! 42", "", "MiXeD-CaSe_~`^"] {
            let fast = PredicateStrings.foldASCII(text, caseInsensitive: options.contains(.caseInsensitive))
            #expect(fast == text.folding(options: options.foldingOptions, locale: nil), "\(Array(text.utf8))")
        }
        #expect(PredicateStrings.foldASCII("Zoë", caseInsensitive: true) == nil)   // not ASCII: Foundation folds it
        #expect(PredicateStrings.fold("ZOË", [.caseInsensitive, .diacriticInsensitive]) == "zoe")
    }
}
