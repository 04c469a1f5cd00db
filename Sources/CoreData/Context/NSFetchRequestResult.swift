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
