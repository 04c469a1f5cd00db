import Foundation

/// The kinds of value a fetch request can return: managed objects, object IDs, dictionaries
/// and counts.
///
/// `NSFetchRequest`'s generic parameter is unconstrained here, so that
/// `NSFetchRequest<NSFetchRequestResult>` compiles as on Apple platforms (where the protocol is an
/// Objective-C protocol and conforms to itself). Linux difference: a Swift protocol cannot.
public protocol NSFetchRequestResult {}

extension NSNumber: NSFetchRequestResult {}
extension NSDictionary: NSFetchRequestResult {}
extension NSManagedObjectID: NSFetchRequestResult {}

extension NSFetchRequestResult where Self: NSManagedObject {
    /// A fetch request for this class's entity.
    ///
    /// ```swift
    /// let request = Item.fetchRequest()          // Item's own, Xcode-generated, if it has one
    /// let any: NSFetchRequest<NSFetchRequestResult> = Garage.fetchRequest()
    /// ```
    ///
    /// Linux difference: Apple's is a class method of `NSManagedObject`. Here it is a member of a
    /// protocol extension, which Swift ranks below a class's own members: the
    /// `fetchRequest() -> NSFetchRequest<Item>` that Xcode generates for a subclass is then the
    /// one `Item.fetchRequest()` calls, with no type annotation needed (as a class method, both
    /// would match and the call would be ambiguous). It cannot be overridden; declare the
    /// subclass's own instead, as Xcode does.
    public static func fetchRequest() -> NSFetchRequest<any NSFetchRequestResult> {
        NSFetchRequest<any NSFetchRequestResult>(entityName: entity().name ?? "")
    }
}
