import CoreData
import Foundation

/// MagicalRecord's entry point, as Swift code sees the Objective-C framework's `MagicalRecord`
/// class when it imports it: class methods that set up the Core Data stack
/// (`MagicalRecord+Setup.swift`), save (`Saving/`), log (`Logging/`) and clean up.
///
/// This module is MagicalRecord for Linux, written on the `CoreData` module's public API
/// (issue 25). It follows MagicalRecord's current release (2.3 and later): the save blocks run
/// in a child of the root saving context. docs/MAGICALRECORD.md lists what is here and what
/// differs on Linux.
///
/// ```swift
/// import MagicalRecord
///
/// MagicalRecord.setupCoreDataStack(withStoreNamed: "Cars.sqlite")
/// MagicalRecord.save(blockAndWait: { context in
///     let car = NSEntityDescription.insertNewObject(forEntityName: "Car", into: context)
///     car.setValue("Model T", forKey: "name")
/// })
/// ```
public enum MagicalRecord {}
