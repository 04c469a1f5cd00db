import CoreData
import Foundation

// MagicalRecord's `MagicalRecordDataImportProtocol` (2.3): the hooks an object's import calls
// (`NSManagedObject+MagicalDataImport.swift`).

/// Hooks an `NSManagedObject` subclass adopts to take part in its own import
/// (MagicalRecord's `MagicalRecordDataImportProtocol`).
///
/// ```swift
/// extension Person: MagicalRecordDataImportProtocol {
///     func didImport(_ data: Any) { name = name?.capitalized }
/// }
/// ```
///
/// Linux difference: MagicalRecord declares these as optional methods of `NSManagedObject`, which
/// a subclass overrides (`override func didImport(_ data: Any)`); here the subclass adopts this
/// protocol and writes them without `override`. MagicalRecord's per-key hooks found by selector
/// name (`import<Key>:`, `shouldImport<Relationship>:`) need the Objective-C runtime and are not
/// called.
public protocol MagicalRecordDataImportProtocol: NSManagedObject {
    /// Whether to import `data` into this object at all; true unless implemented.
    func shouldImport(_ data: Any) -> Bool
    /// Called before the values of `data` are set.
    func willImport(_ data: Any)
    /// Called after the values and relationships of `data` are set.
    func didImport(_ data: Any)
}

extension MagicalRecordDataImportProtocol {
    /// By default every `data` is imported: returns `true`.
    public func shouldImport(_ data: Any) -> Bool { true }
    /// Does nothing by default.
    public func willImport(_ data: Any) {}
    /// Does nothing by default.
    public func didImport(_ data: Any) {}
}
