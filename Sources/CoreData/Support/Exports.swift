// `import CoreData` makes Foundation available, as on Apple platforms. It also lets CoreData's
// `NSExpression` and `NSComparisonPredicate` (which Foundation on Linux declares but deprecates
// as unsupported) be named without qualification in files that import only CoreData
// (docs/PORTING.md, "Predicates").
@_exported import Foundation
