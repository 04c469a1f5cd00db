import CoreData
import Foundation

/// MagicalRecord's entry point, as Swift code sees the Objective-C framework's `MagicalRecord`
/// class when it imports it: class methods that set up the Core Data stack, save, and clean up.
///
/// This module is MagicalRecord for Linux, written on the `CoreData` module's public API
/// (issue 25). It follows MagicalRecord's current release (2.3 and later): the save blocks run
/// in a child of the root saving context.
///
/// ```swift
/// import MagicalRecord
///
/// MagicalRecord.setupCoreDataStack(withStoreNamed: "Cars.sqlite")
/// ```
public enum MagicalRecord {}
