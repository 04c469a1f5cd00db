import Foundation
import Testing
@testable import CoreData

/// UIKit's `IndexPath` members, which fetched results controller clients use, on Linux.
@Suite("IndexPath rows and sections")
struct IndexPathTableViewTests {
    @Test func indexPathsHaveUIKitsRowSectionAndItem() {
        var path = IndexPath(row: 3, section: 1)
        #expect(path.row == 3 && path.section == 1 && path.item == 3 && Array(path) == [1, 3])
        path.row = 4
        #expect(path == IndexPath(item: 4, section: 1))
        path.section = 2
        #expect(Array(path) == [2, 4])
    }
}
