import Foundation

/// What happens to an object's related objects when the object is deleted.
public enum NSDeleteRule: UInt, Sendable {
    /// The relationship is left alone; the related objects may point at a deleted object.
    case noActionDeleteRule = 0
    /// The inverse relationship of each related object is set to nil (removed from its set).
    case nullifyDeleteRule = 1
    /// The related objects are deleted too.
    case cascadeDeleteRule = 2
    /// The delete is refused while the relationship holds any object (error 1600 at save).
    case denyDeleteRule = 3
}

/// The description of a relationship from one entity to another: to-one, to-many or ordered to-many.
///
/// ```swift
/// let owner = NSRelationshipDescription()
/// owner.name = "owner"
/// owner.destinationEntity = person
/// owner.maxCount = 1
/// owner.deleteRule = .nullifyDeleteRule
/// ```
open class NSRelationshipDescription: NSPropertyDescription, @unchecked Sendable {
    /// The entity at the other end. (Not retained, as Apple's is not: `nil` once its model is
    /// gone. A relationship copied into another model finds its destination there by name.)
    open var destinationEntity: NSEntityDescription? {
        get { _destinationEntity }
        set {
            assertMutable()
            _destinationEntity = newValue
            // The name a model file gave goes with it: set to nil, it is not found again by name.
            destinationEntityName = newValue?.name
        }
    }
    /// ``destinationEntity``'s storage, which the model's freezing sets (`ModelLayoutBuilder`).
    internal weak var _destinationEntity: NSEntityDescription?
    /// The relationship that goes the other way, kept in step with this one. (Not retained;
    /// found by name in the model like ``destinationEntity``.)
    open var inverseRelationship: NSRelationshipDescription? {
        get { _inverseRelationship }
        set {
            assertMutable()
            _inverseRelationship = newValue
            // Likewise: a removed inverse is gone from the version hash, and not put back by name.
            inverseName = newValue?.name
        }
    }
    /// ``inverseRelationship``'s storage, which the model's freezing sets (`ModelLayoutBuilder`).
    internal weak var _inverseRelationship: NSRelationshipDescription?
    /// The largest number of related objects; `1` makes a to-one relationship, `0` means no limit.
    open var maxCount: Int = 0 { willSet { assertMutable() } }
    /// The smallest number of related objects required at save.
    open var minCount: Int = 0 { willSet { assertMutable() } }
    /// What deleting the source object does to the related objects.
    open var deleteRule: NSDeleteRule = .nullifyDeleteRule { willSet { assertMutable() } }
    /// Whether a to-many relationship keeps its objects in order (`NSOrderedSet`).
    open var isOrdered: Bool = false { willSet { assertMutable() } }

    /// Whether the relationship can hold more than one object.
    open var isToMany: Bool { maxCount != 1 }

    /// An empty relationship: to-many (``maxCount`` 0), nullify delete rule, no destination yet.
    public required init() { super.init() }

    /// A copy in no entity, with the same destination and inverse (a model's copy points them at its
    /// copied entities).
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = NSRelationshipDescription()
        copy.copyProperties(from: self)
        copy.destinationEntity = destinationEntity
        copy.inverseRelationship = inverseRelationship
        copy.maxCount = maxCount
        copy.minCount = minCount
        copy.deleteRule = deleteRule
        copy.isOrdered = isOrdered
        copy.destinationEntityName = destinationEntityName
        copy.inverseName = inverseName
        return copy
    }

    /// The property's hash with the destination's and inverse's names, the counts and the ordered
    /// flag mixed in, as Apple computes it.
    open override var versionHash: Data { VersionHash.relationshipHash(self) }

    // MARK: Internal, from Xcode's XML before the destination is resolved
    internal var destinationEntityName: String?
    internal var inverseName: String?

    // MARK: Internal layout, fixed when the model is frozen

    /// For a many-to-many relationship (or a to-many with no inverse): its join table.
    internal var joinTable: JoinTable?
    /// For a one-to-many ordered relationship: the `Z_FOK_` column in the destination's table.
    internal var orderColumn: String?
    /// For a to-one whose destination has sub-entities: the column holding the destination's `Z_ENT`.
    internal var entityColumn: String?
    /// For a to-many with no inverse: the column in the destination's table holding the source's key.
    internal var hiddenForeignKeyColumn: String?

    /// The relationship's storage: which side of a join table, or the foreign key on the inverse side.
    internal struct JoinTable: Sendable {
        var name: String
        /// Column holding this side's primary key.
        var sourceColumn: String
        /// Column holding the destination's primary key.
        var destinationColumn: String
        /// `Z_FOK_` column giving the destination's position in this relationship (ordered only).
        var orderColumn: String?
        /// Whether this side names the table (its column comes first).
        var isOwner: Bool
    }
}
