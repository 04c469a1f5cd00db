import Foundation

/// How one property of a destination entity gets its value in a migration: Apple's
/// `NSPropertyMapping`.
///
/// An inferred mapping (``NSMappingModel/inferredMappingModel(forSourceModel:destinationModel:)``)
/// has one per stored property of the destination entity: a kept or renamed property reads
/// `$source.<name in the source model>`; an added one has no value expression (it starts empty,
/// or with its default value).
///
/// ```swift
/// let mapping = NSPropertyMapping()
/// mapping.name = "paintColor"
/// mapping.valueExpression = NSExpression(format: "$source.color")
/// ```
open class NSPropertyMapping: NSObject {
    /// The name of the destination property.
    open var name: String?
    /// The expression that makes the destination value (`$source.color`), or `nil` for none.
    open var valueExpression: NSExpression?
    /// Information of the mapping's author.
    open var userInfo: [AnyHashable: Any]?

    /// The name of the source property an inferred mapping copies from (`nil` for an added
    /// property): what the in-place SQLite migration reads, rather than parsing ``valueExpression``.
    internal var sourcePropertyName: String?

    /// An empty property mapping.
    ///
    /// ```swift
    /// let mapping = NSPropertyMapping()
    /// ```
    public override init() {
        super.init()
    }

    open override var description: String {
        "(<NSPropertyMapping>) name: \(name ?? "nil"), valueExpression: \(valueExpression.map { "\($0)" } ?? "nil")"
    }
}
